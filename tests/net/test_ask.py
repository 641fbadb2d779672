#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The egress ask mode through `cordon run` (docs/design/network.md, "Ask mode"; docs/cli.md):
the prompt on the controlling terminal, driven through a pseudo-terminal (pty), on every proxy
path — forwarded http://, CONNECT, SOCKS5, the redirected (transparent) path after the sandbox's
resolver gave the unlisted name its synthetic address — and what is never asked (a deny entry,
a guarded address), what no terminal means (refused at once), every question and answer in the
events (validated against docs/events.schema.json). Loopback only: the one server is this
script's, on 127.0.0.1; the name ask.test is mapped to it with --resolve.

  test_ask.py CORDON SCHEMA

Runs as root and as cordon-test (tests/net/meson.build). TAP-like output; exit 0 when every
check passed."""
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # staged beside it, for a user
import pty_prompt  # noqa: E402
try:
    import events_validate  # noqa: E402
except ImportError:  # staged alone for another user: the schema check is the root run's
    events_validate = None

CORDON = os.path.abspath(sys.argv[1])
SCHEMA = sys.argv[2] if len(sys.argv) > 2 else None
PROMPT = b"anything else denies ("
HITS = []


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):  # noqa: N802 (the http.server API)
        HITS.append(self.path)
        body = b"ok\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


SERVER = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
PORT = SERVER.server_address[1]
threading.Thread(target=SERVER.serve_forever, daemon=True).start()
TARGET = "ask.test:%d" % PORT
URL = "http://%s/" % TARGET
# Reached through the name only: the allow entry for the address lets the guard pass the
# loopback address the name maps to after an answer allowed the name; the name itself is on no
# list, so it is asked about.
BASE = ["--egress-ask", "--resolve", "ask.test=127.0.0.1", "--allow-domain",
        "127.0.0.1:%d" % PORT]
CURL = "curl -s -o /dev/null --max-time 20 -w '%{http_code}\\n'"

TMP = tempfile.mkdtemp(prefix="cordon-ask-", dir=os.environ.get("CORDON_TEST_TMP", "/var/tmp"))
FAILED = 0
N = 0
SKIPPED = 0


def check(ok, name, detail=""):
    global FAILED, N
    N += 1
    print("%s %d - %s%s" % ("ok" if ok else "not ok", N, name, "" if ok else ": " + detail))
    if not ok:
        FAILED += 1


def read_events(path):
    with open(path, encoding="utf-8") as f:
        lines = [line for line in f if line.strip()]
    evs = [json.loads(line) for line in lines]
    if SCHEMA and events_validate and os.path.exists(SCHEMA):
        with open(SCHEMA, encoding="utf-8") as f:
            schema = json.load(f)
        for line in lines:
            errs = events_validate.validate_line(schema, line if line.endswith("\n")
                                                 else line + "\n")
            check(not errs, "schema: " + json.loads(line)["type"], "; ".join(errs))
    return evs


def on_pty(args, script, answers, timeout=30):
    """`cordon run ARGS -- sh -c SCRIPT` on a new pty (its controlling terminal); each time the
    prompt appears the next answer is typed (None: none, let it time out). Returns (exit status,
    terminal output, events, prompts seen)."""
    ev = os.path.join(TMP, "ev-%d.json" % N)
    argv = [CORDON, "run", "--events", ev] + args + ["--", "sh", "-c", script]
    rc, out, seen = pty_prompt.run(argv, TMP, PROMPT, answers, timeout)
    return rc, out, read_events(ev), seen


def of(evs, kind):
    return [e for e in evs if e["type"] == kind]


def codes(out):
    return [line.strip() for line in out.replace("\r", "").split("\n")
            if line.strip().isdigit() and len(line.strip()) == 3]


def test_session_every_path():
    HITS.clear()
    script = "; ".join([
        CURL + " " + URL,                                       # forwarded http://
        CURL + " -p -x http://127.0.0.1:3128 " + URL,           # CONNECT
        CURL + " --socks5-hostname 127.0.0.1:1080 " + URL,      # SOCKS5
        CURL + " --noproxy '*' " + URL,                         # redirected (transparent)
        "/usr/bin/python3 -c 'import socket; print(\"resolved\", "
        "socket.gethostbyname(\"ask.test\"))'"])
    rc, out, evs, seen = on_pty(BASE, script, ["s"])
    check(rc == 0 and codes(out) == ["200"] * 4, "allow-session: every path reaches it",
          "rc %d codes %s" % (rc, codes(out)))
    check(seen == 1, "allow-session: asked once for four connections", "%d prompts" % seen)
    asks, answers = of(evs, "egress.ask"), of(evs, "egress.answer")
    check(len(asks) == 1 and asks[0]["target"] == TARGET and asks[0]["protocol"] == "http" and
          asks[0]["timeoutMs"] == 30000, "allow-session: one egress.ask event", str(asks))
    check([a["answer"] for a in answers] == ["allow-session"] and
          answers[0]["id"] == asks[0]["id"], "allow-session: its egress.answer", str(answers))
    check(not of(evs, "violation"), "allow-session: no violation", str(of(evs, "violation")))
    check(len(HITS) == 4, "allow-session: the server saw four requests", str(HITS))
    check("resolved 198.18." in out or "resolved 198.19." in out,
          "the sandbox's resolver gave the unlisted name a synthetic address", out)


def test_once():
    HITS.clear()
    # Two URLs on one command line share one keep-alive connection: asked once for it; the
    # second command is a new connection and is asked again.
    script = CURL + " " + URL + " -o /dev/null " + URL + "; " + CURL + " --noproxy '*' " + URL
    rc, out, evs, seen = on_pty(BASE, script, ["o", "o"])
    check(codes(out) == ["200", "200", "200"], "allow-once: allowed", str(codes(out)))
    check(seen == 2, "allow-once: a new connection is asked again", "%d prompts" % seen)
    check([a["answer"] for a in of(evs, "egress.answer")] == ["allow-once"] * 2 and
          [a["protocol"] for a in of(evs, "egress.ask")] == ["http", "tcp"],
          "allow-once: the events", str(of(evs, "egress.answer")))
    check(len(HITS) == 3, "allow-once: the server saw three requests", str(HITS))


def test_deny():
    HITS.clear()
    script = CURL + " " + URL + "; " + CURL + " --socks5-hostname 127.0.0.1:1080 " + URL
    rc, out, evs, seen = on_pty(BASE, script, ["n"])
    check(codes(out) == ["403", "000"], "deny: refused (403, then SOCKS5 refused)",
          str(codes(out)))
    check(seen == 1, "deny: a denied destination is not asked again", "%d prompts" % seen)
    rules = [v["raw"]["rule"] for v in of(evs, "violation")]
    check(rules == ["ask: denied", "ask: denied earlier in this run"], "deny: the violations",
          str(rules))
    check([a["answer"] for a in of(evs, "egress.answer")] == ["deny"], "deny: the answer event",
          str(of(evs, "egress.answer")))
    check(not HITS, "deny: nothing reached the server", str(HITS))


def test_timeout():
    HITS.clear()
    rc, out, evs, seen = on_pty(BASE + ["--ask-timeout", "300ms"], CURL + " " + URL, [None])
    check(codes(out) == ["403"] and seen == 1, "timeout: refused", "%s %d" % (codes(out), seen))
    check([a["answer"] for a in of(evs, "egress.answer")] == ["timeout"],
          "timeout: recorded as such", str(of(evs, "egress.answer")))
    rules = [v["raw"]["rule"] for v in of(evs, "violation")]
    check(rules == ["ask: no answer within 300 ms"], "timeout: the violation", str(rules))
    check("no answer in time" in out, "timeout: the prompt says so", out)
    check(not HITS, "timeout: nothing reached the server", str(HITS))


def test_never_asked():
    HITS.clear()
    # The metadata address is on the built-in deny list; 169.254.1.1 (link-local) only the
    # guard refuses.
    script = (CURL + " " + URL + "; " + CURL + " --noproxy '*' http://169.254.169.254/; " +
              CURL + " -x http://127.0.0.1:3128 http://169.254.1.1:%d/" % PORT)
    rc, out, evs, seen = on_pty(BASE + ["--deny-domain", "ask.test"], script, [])
    check(seen == 0 and not of(evs, "egress.ask"),
          "a deny entry, the metadata address and loopback are never asked about",
          "%d prompts, %s" % (seen, of(evs, "egress.ask")))
    check(codes(out) == ["403", "000", "403"], "they are refused", str(codes(out)))
    check(len(of(evs, "violation")) == 3, "each with its violation", str(of(evs, "violation")))


def landlock_available():
    p = subprocess.run([CORDON, "probe"], capture_output=True, text=True, timeout=60)
    return any(line.split()[:2] in (["landlock", "full"], ["landlock", "partial"])
               for line in p.stdout.splitlines())


def test_landlock_backend():
    """The landlock backend's proxy (on the host's loopback, with credentials) asks too."""
    global N, SKIPPED
    if not landlock_available():
        N += 1
        SKIPPED += 1
        print("ok %d - # SKIP the landlock backend is not available here" % N)
        return
    HITS.clear()
    script = CURL + " " + URL + "; " + CURL + ' --proxy "$ALL_PROXY" ' + URL
    rc, out, evs, seen = on_pty(["--backend", "landlock"] + BASE, script, ["o", "d"])
    check(codes(out) == ["200", "000"] and seen == 2,
          "landlock backend: asked on the HTTP and the SOCKS5 proxy", "%s %d" % (codes(out), seen))
    check([a["answer"] for a in of(evs, "egress.answer")] == ["allow-once", "deny"] and
          [a["protocol"] for a in of(evs, "egress.ask")] == ["http", "socks5"],
          "landlock backend: the events", str(of(evs, "egress.answer")))
    check(len(HITS) == 1, "landlock backend: only the allowed request arrived", str(HITS))


def test_no_terminal():
    HITS.clear()
    ev = os.path.join(TMP, "ev-notty.json")
    p = subprocess.run([CORDON, "run", "--events", ev] + BASE + ["--", "sh", "-c",
                        CURL + " " + URL], stdin=subprocess.DEVNULL, capture_output=True,
                       start_new_session=True, cwd=TMP, timeout=60)
    evs = read_events(ev)
    check(p.stdout.decode().split() == ["403"], "no terminal: refused at once",
          p.stdout.decode() + p.stderr.decode())
    check([a["answer"] for a in of(evs, "egress.answer")] == ["unanswered"],
          "no terminal: recorded as unanswered", str(evs))
    check(b"without a terminal" in p.stderr, "no terminal: cordon says so", p.stderr.decode())


def main():
    try:
        test_session_every_path()
        test_once()
        test_deny()
        test_timeout()
        test_never_asked()
        test_landlock_backend()
        test_no_terminal()
    finally:
        SERVER.shutdown()
        subprocess.run(["rm", "-rf", TMP], check=False)
    print("# %d passed, %d failed, %d skipped" % (N - FAILED - SKIPPED, FAILED, SKIPPED))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
