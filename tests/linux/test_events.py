#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`cordon run --events` end to end: real sandboxed commands produce every event type (exit,
exit by signal, violation, killed by timeout, error from a launcher failure), and every emitted
line is validated against docs/events.schema.json. Also: the validator refuses broken events,
and --events' FILE and fd:N forms behave as docs/cli.md says.

Usage: test_events.py CORDON SCHEMA (meson passes both)."""
import base64
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import events_validate as validate  # noqa: E402

CORDON = None
SCHEMA = None


def sanitized():
    """Whether the build under test uses -Db_sanitize (meson's introspection of CORDON_BUILD_DIR)."""
    info = os.path.join(os.environ.get("CORDON_BUILD_DIR", ""), "meson-info",
                        "intro-buildoptions.json")
    try:
        with open(info, encoding="utf-8") as f:
            opts = {o["name"]: o["value"] for o in json.load(f)}
    except OSError:
        return False
    return opts.get("b_sanitize", "none") != "none"


class Run:
    """One finished cordon run: status, stderr, and the parsed events."""

    def __init__(self, status, stderr, lines):
        self.status = status
        self.stderr = stderr
        self.lines = lines
        self.events = [json.loads(line) for line in lines]

    def types(self):
        """The event types in order, e.g. ['starting', 'ready', 'exit']."""
        return [e["type"] for e in self.events]


class EventsTest(unittest.TestCase):
    """Each test runs in a fresh workspace with a fresh HOME."""

    seen_types = set()

    def setUp(self):
        base = os.environ.get("CORDON_TEST_TMP", "/var/tmp")
        self.tmp = tempfile.mkdtemp(prefix="cordon-events-", dir=base)
        self.ws = os.path.realpath(os.path.join(self.tmp, "ws"))
        self.home = os.path.join(self.tmp, "home")
        os.mkdir(self.ws)
        os.mkdir(self.home, 0o700)
        self.events_file = os.path.join(self.tmp, "events.jsonl")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def cordon(self, *args, **kw):
        """Runs cordon with args in the workspace; returns the CompletedProcess."""
        env = {"PATH": "/usr/bin:/bin", "HOME": self.home}
        return subprocess.run([CORDON, *args], cwd=self.ws, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=60, **kw)

    def assert_valid(self, lines):
        """Every line matches the schema; all of a run's lines share one sessionId."""
        for line in lines:
            errors = validate.validate_line(SCHEMA, line)
            self.assertEqual(errors, [], f"invalid event {line!r}")
        ids = {json.loads(line)["sessionId"] for line in lines}
        self.assertLessEqual(len(ids), 1)

    def run_events(self, *args, **kw):
        """`cordon run --events FILE ARGS...`, validated."""
        p = self.cordon("run", "--events", self.events_file, *args, **kw)
        with open(self.events_file, encoding="utf-8", newline="") as f:
            lines = f.readlines()
        self.assert_valid(lines)
        run = Run(p.returncode, p.stderr.decode(errors="replace"), lines)
        EventsTest.seen_types.update(run.types())
        return run

    def test_normal_exit(self):
        r = self.run_events("--", "sh", "-c", "exit 7")
        self.assertEqual(r.status, 7)
        self.assertEqual(r.types(), ["starting", "ready", "exit"])
        self.assertEqual(r.events[0]["backend"], "auto")
        self.assertEqual(r.events[1]["backend"], "native")
        self.assertEqual(r.events[2]["exitCode"], 7)
        self.assertNotIn("signal", r.events[2])

    def test_signal_exit(self):
        r = self.run_events("--session-id", "s-1", "--", "sh", "-c", "kill -TERM $$")
        self.assertEqual(r.status, 143)
        self.assertEqual(r.types(), ["starting", "ready", "exit"])
        self.assertEqual(r.events[2]["exitCode"], 143)
        self.assertEqual(r.events[2]["signal"], "SIGTERM")
        self.assertEqual({e["sessionId"] for e in r.events}, {"s-1"})

    def test_one_violation_per_refusal(self):
        r = self.run_events("--", "sh", "-c", "touch .env 2>/dev/null; touch ok.txt")
        self.assertEqual(r.status, 0)
        self.assertEqual(r.types(), ["starting", "ready", "violation", "exit"])
        v = r.events[2]
        self.assertEqual(v["action"], "file-create-name")
        self.assertEqual(v["target"], os.path.join(self.ws, ".env"))
        self.assertEqual(v["raw"]["rule"], ".env")
        self.assertFalse(os.path.exists(os.path.join(self.ws, ".env")))
        self.assertTrue(os.path.exists(os.path.join(self.ws, "ok.txt")))  # allowed case

    def test_egress_ask_without_terminal(self):
        # Ask mode with nobody to ask (no controlling terminal): the question and its answer
        # are recorded, the connection refused at once (tests/net/test_ask.py has the rest).
        r = self.run_events("--egress-ask", "--", "sh", "-c",
                            "curl -s -o /dev/null --max-time 20 http://192.0.2.1:8080/",
                            start_new_session=True)
        self.assertEqual(r.types(), ["starting", "ready", "egress.ask", "egress.answer",
                                     "violation", "exit"])
        self.assertEqual(r.events[2]["target"], "192.0.2.1:8080")
        self.assertEqual(r.events[3]["answer"], "unanswered")
        self.assertEqual(r.events[4]["raw"]["rule"], "ask: nobody to answer")

    def test_repositories_reported(self):
        # Each repository created during the run, once, at its end; not a violation. One that
        # was removed again, and a directory whose marker went away, are not reported.
        r = self.run_events("--", "sh", "-c",
                            "git init -q a && git init -q b/c && git init -q gone && "
                            "rm -rf gone && mkdir x && mkdir x/objects && rmdir x/objects && "
                            "git -C a status >/dev/null")
        self.assertEqual(r.status, 0, r.stderr)
        self.assertEqual(r.types(), ["starting", "ready", "repository", "repository", "exit"])
        paths = sorted(e["path"] for e in r.events if e["type"] == "repository")
        self.assertEqual(paths, [os.path.join(self.ws, "a/.git"), os.path.join(self.ws, "b/c/.git")])
        self.assertNotIn("cordon: denied", r.stderr)

    def test_full_tmp_reported(self):
        # A bounded private /tmp: dd gets ENOSPC, the run reports the full tmpfs once.
        r = self.run_events("--tmp-size", "8M", "--", "sh", "-c",
                            "dd if=/dev/zero of=/tmp/fill bs=1M count=64 2>&1; echo dd=$?")
        self.assertEqual(r.status, 0)
        self.assertEqual(r.types(), ["starting", "ready", "violation", "exit"])
        v = r.events[2]
        self.assertEqual((v["action"], v["target"], v["raw"]["syscall"]),
                         ("resource-limit", "/tmp", "write"))
        self.assertIn("limits.tmpSize (8388608 bytes)", v["raw"]["rule"])
        ok = self.run_events("--tmp-size", "8M", "--", "sh", "-c",
                             "dd if=/dev/zero of=/tmp/fill bs=1M count=4 2>/dev/null")
        self.assertEqual(ok.types(), ["starting", "ready", "exit"])  # room left: no report

    def test_nss_lookups_quiet(self):
        # glibc asks nscd / systemd-userdb over AF_UNIX for every uid-to-name lookup: not a
        # refusal worth reporting (refused all the same).
        r = self.run_events("--", "sh", "-c", "ls -l / >/dev/null && id && getent passwd root")
        self.assertEqual(r.status, 0)
        self.assertEqual(r.types(), ["starting", "ready", "exit"])

    def test_timeout_killed(self):
        r = self.run_events("--timeout", "300ms", "--", "sleep", "30")
        self.assertEqual(r.status, 125)
        self.assertIn("cordon: fatal: TIMEOUT:", r.stderr)
        self.assertEqual(r.types(), ["starting", "ready", "killed"])
        self.assertEqual(r.events[2]["reason"], "timeout")

    def test_launcher_failure_error(self):
        r = self.run_events("--backend", "microvm", "--", "touch", "ran")
        self.assertEqual(r.status, 125)
        self.assertEqual(r.types(), ["starting", "error"])
        self.assertEqual(r.events[0]["backend"], "microvm")
        self.assertEqual(r.events[1]["code"], "SANDBOX_UNAVAILABLE")
        fatal = f"cordon: fatal: SANDBOX_UNAVAILABLE: {r.events[1]['message']}\n"
        self.assertEqual(r.stderr, fatal)  # the same code and message as the fatal line
        self.assertFalse(os.path.exists(os.path.join(self.ws, "ran")))

    def test_exec_failure_error(self):
        r = self.run_events("--", "no-such-command-here")
        self.assertEqual(r.status, 125)
        self.assertEqual(r.types(), ["starting", "ready", "error"])
        self.assertEqual(r.events[2]["code"], "EXEC_FAILED")

    def test_file_is_private_and_truncated(self):
        with open(self.events_file, "w", encoding="utf-8") as f:
            f.write("old junk that must go\n" * 100)
        os.chmod(self.events_file, 0o600)
        r = self.run_events("--", "true")
        self.assertEqual(r.types(), ["starting", "ready", "exit"])
        os.unlink(self.events_file)
        self.run_events("--", "true")
        self.assertEqual(stat.S_IMODE(os.stat(self.events_file).st_mode), 0o600)

    def test_fd_form(self):
        rfd, wfd = os.pipe()
        try:
            p = self.cordon("run", "--events", f"fd:{wfd}", "--", "sh", "-c",
                            f"echo x >&{wfd} 2>/dev/null; exit 2", pass_fds=(wfd,))
        finally:
            os.close(wfd)
        with os.fdopen(rfd, encoding="utf-8", newline="") as f:
            lines = f.readlines()
        self.assertEqual(p.returncode, 2)
        self.assert_valid(lines)  # the command could not write into the events fd
        self.assertEqual([json.loads(x)["type"] for x in lines], ["starting", "ready", "exit"])

    def test_bad_fds_refused(self):
        p = self.cordon("run", "--events", "fd:9", "--", "touch", "ran")
        self.assertEqual(p.returncode, 125)
        self.assertTrue(p.stderr.startswith(b"cordon: fatal: POLICY_INVALID: --events: fd 9 "))
        fd = os.open("/dev/null", os.O_RDONLY)
        try:
            p = self.cordon("run", "--events", f"fd:{fd}", "--", "touch", "ran", pass_fds=(fd,))
        finally:
            os.close(fd)
        self.assertEqual(p.returncode, 125)
        self.assertIn(b"is not writable", p.stderr)
        p = self.cordon("run", "--events", os.path.join(self.tmp, "no", "x"), "--", "touch", "ran")
        self.assertEqual(p.returncode, 125)
        self.assertIn(b"POLICY_INVALID: --events: cannot create", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.ws, "ran")))

    def test_validator_refuses_broken_events(self):
        good = {"type": "exit", "sessionId": "s", "time": "2026-01-02T03:04:05.678Z",
                "exitCode": 0}
        self.assertEqual(validate.validate_line(SCHEMA, json.dumps(good) + "\n"), [])
        broken = [
            {k: v for k, v in good.items() if k != "exitCode"},  # missing required
            {**good, "extra": 1},                                  # additionalProperties
            {**good, "type": "exited"},                            # no alternative matches
            {**good, "time": "2026-01-02 03:04:05Z"},              # pattern
            {**good, "exitCode": True},                            # type
            {**good, "exitCode": 256},                             # maximum
            {**good, "sessionId": ""},                             # minLength
            {"type": "killed", "sessionId": "s", "time": good["time"], "reason": "bored"},
            {"type": "violation", "sessionId": "s", "time": good["time"], "action":
             "file-create-name", "target": "/x", "raw": {"syscall": "openat"}},
        ]
        for b in broken:
            self.assertNotEqual(validate.validate_line(SCHEMA, json.dumps(b) + "\n"), [], b)
        self.assertNotEqual(validate.validate_line(SCHEMA, json.dumps(good)), [])  # no newline
        with self.assertRaises(ValueError):
            validate.errors_of({}, {"format": "date-time"}, "x")  # unknown keyword: loud

    # ---- --capture: the command's stdout and stderr as events ---------------------------------

    def run_captured(self, script, stdout=subprocess.PIPE):
        """`cordon run --events FILE --capture -- sh -c SCRIPT`; the process, the validated run,
        and each stream rebuilt from its events."""
        env = {"PATH": "/usr/bin:/bin", "HOME": self.home}
        p = subprocess.run([CORDON, "run", "--events", self.events_file, "--capture", "--",
                            "sh", "-c", script], cwd=self.ws, env=env, stdin=subprocess.DEVNULL,
                           stdout=stdout, stderr=subprocess.PIPE, timeout=120)
        with open(self.events_file, encoding="utf-8", newline="") as f:
            lines = f.readlines()
        self.assert_valid(lines)
        run = Run(p.returncode, p.stderr.decode(errors="replace"), lines)
        EventsTest.seen_types.update(run.types())
        streams = {"stdout": b"", "stderr": b""}
        for e in run.events:
            if e["type"] in streams:
                raw = (base64.b64decode(e["data"], validate=True) if e.get("encoding") == "base64"
                       else e["data"].encode("utf-8"))
                self.assertLessEqual(len(raw), 16384)
                streams[e["type"]] += raw
        return p, run, streams

    def test_capture_forwards_and_records(self):
        script = (r"printf 'out 1\n'; printf 'err 1\n' >&2; printf '\377\376bin'; "
                  r"printf 'caf\303'; sleep 0.1; printf '\251 \000ok\n'; printf 'err 2' >&2; "
                  r"touch .env 2>/dev/null; exit 3")
        p, run, streams = self.run_captured(script)
        self.assertEqual(p.returncode, 3)
        want_out = b"out 1\n\377\376bincaf\303\251 \000ok\n"
        self.assertEqual(p.stdout, want_out)          # forwarded unchanged
        self.assertEqual(p.stderr, b"err 1\nerr 2")
        self.assertEqual(streams["stdout"], want_out)  # and recorded exactly
        self.assertEqual(streams["stderr"], b"err 1\nerr 2")
        out = [e for e in run.events if e["type"] == "stdout"]
        self.assertIn({"data": "\u00e9 \u0000ok\n"}, [{"data": e["data"]} for e in out])
        self.assertTrue(any(e.get("encoding") == "base64" for e in out))
        self.assertEqual(run.types()[-1], "exit")      # every chunk before the terminal event
        self.assertEqual(run.types().count("violation"), 1)

    def test_capture_refusal_before_later_output(self):
        """docs/protocol.md, "Order of events": a refusal comes before the output written after
        the refused call returned (the launcher delivers queued reports before each chunk of
        output). Checked many times: the order must never depend on scheduling."""
        for i in range(12):
            p, run, _ = self.run_captured(f"touch .env 2>/dev/null; echo after{i}; exit 0")
            types = run.types()
            self.assertIn("violation", types, types)
            self.assertLess(types.index("violation"), types.index("stdout"), types)
            self.assertEqual(types[-1], "exit")

    def test_capture_flood_is_bounded(self):
        # 40 MB through the pipes: all of it arrives, in bounded chunks, with bounded memory.
        size = 40 * 1024 * 1024
        env = {"PATH": "/usr/bin:/bin", "HOME": self.home}
        with open(os.path.join(self.tmp, "out"), "wb") as out:
            pid = os.posix_spawn(CORDON, [CORDON, "run", "--events", "/dev/null", "--capture",
                                          "--", "head", "-c", str(size), "/dev/zero"], env,
                                 file_actions=[(os.POSIX_SPAWN_DUP2, out.fileno(), 1)])
            _, status, usage = os.wait4(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)
        self.assertEqual(os.path.getsize(os.path.join(self.tmp, "out")), size)
        if not sanitized():  # ASan's quarantine keeps freed buffers: its RSS says nothing
            self.assertLess(usage.ru_maxrss, 64 * 1024)  # KiB: far below what was written
        p, run, streams = self.run_captured("yes abcdefgh | head -c 3000000; "
                                            "yes xyz | head -c 1000000 >&2")
        self.assertEqual(p.returncode, 0)
        self.assertEqual(streams["stdout"], p.stdout)
        self.assertEqual(len(p.stdout), 3000000)
        self.assertEqual(streams["stderr"], p.stderr)
        self.assertEqual(len(p.stderr), 1000000)

    def test_capture_reader_gone(self):
        # cordon's stdout reader exits: the command's writes fail as they would have (SIGPIPE).
        sh = (f"exec {CORDON} run --events {self.events_file} --capture -- yes | head -c 10 "
              ">/dev/null; echo ${PIPESTATUS[0]}")
        p = subprocess.run(["bash", "-c", sh], cwd=self.ws, capture_output=True, timeout=60,
                           env={"PATH": "/usr/bin:/bin", "HOME": self.home})
        self.assertEqual(p.stdout.strip(), b"141")
        with open(self.events_file, encoding="utf-8", newline="") as f:
            lines = f.readlines()
        self.assert_valid(lines)
        self.assertEqual(json.loads(lines[-1])["signal"], "SIGPIPE")

    def test_capture_needs_events(self):
        p = self.cordon("run", "--capture", "--", "true")
        self.assertEqual(p.returncode, 125)
        self.assertIn(b"--capture needs --events", p.stderr)

    def test_validator_refuses_broken_output(self):
        good = {"type": "stdout", "sessionId": "s", "time": "2026-01-02T03:04:05.678Z",
                "data": "hi"}
        b64 = {**good, "data": "aGk=", "encoding": "base64"}
        for ok in (good, b64, {**good, "type": "stderr"}):
            self.assertEqual(validate.validate_line(SCHEMA, json.dumps(ok) + "\n"), [], ok)
        for bad in ({**good, "data": "x" * 16385}, {**b64, "data": "aGk"},
                    {**b64, "encoding": "hex"}, {**good, "type": "stdin"},
                    {**b64, "data": "a=Gk"}, {**good, "data": 3}):
            self.assertNotEqual(validate.validate_line(SCHEMA, json.dumps(bad) + "\n"), [], bad)

    def test_zz_every_type_seen(self):
        # Runs last (alphabetical order): the runs above produced every type the schema has.
        # The event types are those of the top-level oneOf (the analytics records, also in
        # $defs, are not events: tests/linux/test_analytics.py).
        want = set()
        for ref in SCHEMA["oneOf"]:
            d = SCHEMA["$defs"][ref["$ref"].rsplit("/", 1)[1]]
            kind = d.get("properties", {}).get("type", {})
            want.update([kind["const"]] if "const" in kind else kind.get("enum", []))
        want.discard("escalation")  # cordond only: tests/daemon produces and validates it
        self.assertEqual(EventsTest.seen_types, want)


def main():
    """Takes CORDON and SCHEMA off argv, then runs the tests."""
    global CORDON, SCHEMA
    CORDON = os.path.abspath(sys.argv[1])
    with open(sys.argv[2], encoding="utf-8") as f:
        SCHEMA = json.load(f)
    unittest.main(argv=[sys.argv[0], "-v"])


if __name__ == "__main__":
    main()
