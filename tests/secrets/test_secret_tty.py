# SPDX-License-Identifier: Apache-2.0
"""tests/secrets/test_secret_tty.py CORDON: `cordon secret set NAME` from a terminal: a prompt on
the terminal, the typed value not echoed (it must not stay on the screen or in a scrollback),
stored without the Enter's newline, and the terminal's echo back on afterwards. As root and as
cordon-test (secrets-tty-user)."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pty_prompt  # noqa: E402

cordon = os.path.abspath(sys.argv[1])
base = tempfile.mkdtemp(prefix="cordon-secret-tty.", dir=os.environ.get("CORDON_TEST_TMP", "/var/tmp"))
os.environ["HOME"] = base
os.environ.pop("DBUS_SESSION_BUS_ADDRESS", None)
fails = 0


def check(ok, what, out=""):
    global fails
    print(("ok - " + what) if ok else f"not ok - {what}: {out!r}")
    fails += 0 if ok else 1


value = "typed-s3cret-value"
# `stty -a` on the same terminal after cordon exits: the echo it turned off is back on.
status, out, seen = pty_prompt.run(
    ["/bin/sh", "-c", f"'{cordon}' secret set tok; echo status=$?; stty -a"], base,
    b"(not echoed): ", [value])
check(seen == 1, f"one prompt (saw {seen})", out)
check(value not in out, "the value is not echoed", out)
check("status=0" in out, "set succeeded", out)
check("Stored secret 'tok' in the file store" in out, "set says the store", out)
stty = out[out.find("status="):]
check("echo" in stty.split(), "echo is on again", stty)
with open(os.path.join(base, ".config/cordon/secrets/store/tok"), "rb") as f:
    check(f.read() == value.encode(), "stored without the newline")

# An empty line at the prompt is refused (nothing stored).
status, out, seen = pty_prompt.run([cordon, "secret", "set", "empty"], base, b"(not echoed): ", [""])
check(status == 125 and "the value is empty" in out, "an empty answer is refused", out)
check(not os.path.exists(os.path.join(base, ".config/cordon/secrets/store/empty")), "nothing stored")

os.system(f"rm -rf '{base}'")
print(f"{fails} failed")
sys.exit(1 if fails else 0)
