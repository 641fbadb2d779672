#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`cordon run --events` end to end: real sandboxed commands produce every event type (exit,
exit by signal, violation, killed by timeout, error from a launcher failure), and every emitted
line is validated against docs/events.schema.json. Also: the validator refuses broken events,
and --events' FILE and fd:N forms behave as docs/cli.md says.

Usage: test_events.py CORDON SCHEMA (meson passes both)."""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import validate  # noqa: E402

CORDON = None
SCHEMA = None


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

    def run_events(self, *args):
        """`cordon run --events FILE ARGS...`, validated."""
        p = self.cordon("run", "--events", self.events_file, *args)
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

    def test_zz_every_type_seen(self):
        # Runs last (alphabetical order): the runs above produced every type the schema has.
        want = set(SCHEMA["$defs"]) - {"sessionId", "time", "backend"}
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
