#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The command policy's "ask" rules through `cordon run` (docs/policy.md, "Command policy";
docs/cli.md): the question on the controlling terminal, driven through a pseudo-terminal (pty),
before anything of the command runs; a "y" runs it, anything else refuses it with one fatal
line (exit 125); a "refuse" rule in the same line refuses without asking; no terminal means
nobody to ask (refused at once, with the message saying how to approve); the none backend
(--sandbox off) asks the same.

  test_command_ask.py CORDON

Runs as root and as cordon-test (tests/cli/meson.build). TAP-like output; exit 0 when every
check passed."""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # staged beside it, for a user
import pty_prompt  # noqa: E402

CORDON = os.path.abspath(sys.argv[1])
PROMPT = b"anything else refuses: "
TMP = tempfile.mkdtemp(prefix="cordon-cmdask-", dir=os.environ.get("CORDON_TEST_TMP", "/var/tmp"))
POLICY = os.path.join(TMP, "policy.json")
with open(POLICY, "w", encoding="utf-8") as f:
    json.dump({"commandPolicy": [
        {"command": "touch asked", "action": "ask"},
        {"command": "touch refused", "action": "refuse"}]}, f)
FAILED = 0
N = 0


def check(ok, name, detail=""):
    global FAILED, N
    N += 1
    print("%s %d - %s%s" % ("ok" if ok else "not ok", N, name, "" if ok else ": " + detail))
    if not ok:
        FAILED += 1


def clean():
    for name in ("asked", "refused", "other"):
        path = os.path.join(TMP, name)
        if os.path.exists(path):
            os.unlink(path)


def on_pty(args, script, answers, timeout=60):
    """`cordon run --policy POLICY ARGS -- sh -c SCRIPT` on a new pty (its controlling
    terminal), each question answered with the next of `answers`. Returns (exit status,
    terminal output, questions seen)."""
    argv = [CORDON, "run", "--policy", POLICY] + args + ["--", "sh", "-c", script]
    return pty_prompt.run(argv, TMP, PROMPT, answers, timeout)


def exists(name):
    return os.path.exists(os.path.join(TMP, name))


def test_approved(args, what):
    clean()
    rc, out, seen = on_pty(args, "touch other && touch asked", ["y"])
    check(rc == 0 and seen == 1 and exists("asked") and exists("other"),
          what + ": approved, the whole line runs", "rc %d, %d questions: %s" % (rc, seen, out))
    check("asks before 'touch asked' runs" in out and "sh -c touch other && touch asked" in out,
          what + ": the question names the rule and shows the command line", out)


def test_denied(args, what):
    clean()
    rc, out, seen = on_pty(args, "touch other; touch asked", ["n"])
    fatal = [line for line in out.replace("\r", "").split("\n")
             if line.startswith("cordon: fatal: ")]
    check(rc == 125 and seen == 1 and not exists("other") and not exists("asked"),
          what + ": refused, nothing of the line ran", "rc %d, %d questions: %s" % (rc, seen, out))
    check(len(fatal) == 1 and fatal[0].startswith("cordon: fatal: EXEC_FAILED: ") and
          "it was not approved" in fatal[0], what + ": one fatal line says it was not approved",
          repr(fatal))


def test_refuse_beats_ask():
    clean()
    rc, out, seen = on_pty([], "touch asked; touch refused", ["y"])
    check(rc == 125 and seen == 0 and not exists("asked") and "refuses 'touch refused'" in out,
          "a refuse rule in the same line: refused without a question",
          "rc %d, %d questions: %s" % (rc, seen, out))


def test_no_terminal():
    clean()
    t0 = time.monotonic()
    p = subprocess.run([CORDON, "run", "--policy", POLICY, "--", "touch", "asked"],
                       stdin=subprocess.DEVNULL, capture_output=True, start_new_session=True,
                       cwd=TMP, timeout=60)
    err = p.stderr.decode()
    check(p.returncode == 125 and not exists("asked") and "nobody to ask" in err and
          "commandApproved" in err and time.monotonic() - t0 < 30,
          "no terminal: refused at once, saying how to approve", "rc %d: %s" % (p.returncode, err))


def main():
    try:
        test_approved([], "native")
        test_denied([], "native")
        test_approved(["--sandbox", "off"], "none backend")
        test_denied(["--sandbox", "off"], "none backend")
        test_refuse_beats_ask()
        test_no_terminal()
    finally:
        subprocess.run(["rm", "-rf", TMP], check=False)
    print("# %d passed, %d failed" % (N - FAILED, FAILED))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
