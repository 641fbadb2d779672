#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`cordon run --analytics FILE` end to end (docs/cli.md, docs/events.schema.json
analyticsViolation / analyticsSummary): the records carry no path, host, rule or command text of
the run; equal targets hash equally across runs with one key and differently with another; the
key is made 0600 in the secret set and the command cannot read it; a bad key fails closed.

Usage: test_analytics.py CORDON SCHEMA (meson passes both)."""
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
MARK = "zq7marker"  # in every path, host and argument of the attacking command
KEY = ".config/cordon/secrets/analytics.key"


class AnalyticsTest(unittest.TestCase):
    def setUp(self):
        base = os.environ.get("CORDON_TEST_TMP", "/var/tmp")
        self.tmp = tempfile.mkdtemp(prefix="cordon-analytics-", dir=base)
        self.ws = os.path.realpath(os.path.join(self.tmp, "ws-" + MARK))
        self.home = os.path.join(self.tmp, "home")
        os.mkdir(self.ws)
        os.mkdir(self.home, 0o700)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def cordon(self, *args):
        env = {"PATH": "/usr/bin:/bin", "HOME": self.home, "SECRET_" + MARK: MARK}
        return subprocess.run([CORDON, *args], cwd=self.ws, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=60)

    def attack(self, out):
        """Refusals of each kind whose targets, rule and command line all hold MARK."""
        script = (f"touch .env.{MARK} 2>/dev/null; touch {MARK}.pem 2>/dev/null; "
                  f"curl -s -m 5 http://{MARK}.example.invalid/ >/dev/null 2>&1; "
                  f"python3 -c 'import socket; socket.socket(socket.AF_INET).connect((\"{MARK}.example.invalid\", 81))' 2>/dev/null; "
                  f"echo {MARK} > ok-{MARK}.txt; exit 4")
        p = self.cordon("run", "--analytics", out, "--deny-create-name", f"*{MARK}*",
                        "--", "sh", "-c", script)
        self.assertEqual(p.returncode, 4, p.stderr)
        with open(out, encoding="utf-8") as f:
            text = f.read()
        return text, [json.loads(line) for line in text.splitlines()]

    def validate(self, records):
        defs = SCHEMA["$defs"]
        for r in records:
            d = defs["analyticsSummary" if r["type"] == "summary" else "analyticsViolation"]
            self.assertEqual(validate.errors_of(SCHEMA, d, r), [], r)

    def test_no_text_of_the_run(self):
        out = os.path.join(self.tmp, "a.jsonl")
        text, records = self.attack(out)
        self.validate(records)
        self.assertNotIn(MARK, text)
        self.assertNotIn(self.ws, text)
        self.assertNotIn("example.invalid", text)
        self.assertNotIn("/", text.replace('"time"', ""))  # no path of any kind
        self.assertEqual(records[-1]["type"], "summary")
        self.assertEqual(records[-1]["end"], "exit")
        self.assertEqual(records[-1]["exitCode"], 4)
        violations = [r for r in records if r["type"] == "violation"]
        self.assertGreaterEqual(len(violations), 3)
        self.assertEqual(records[-1]["violations"], sum(r["count"] for r in violations))
        self.assertIn("file-create-name", records[-1]["byAction"])
        self.assertIn("network-outbound", records[-1]["byAction"])
        self.assertEqual(stat.S_IMODE(os.stat(out).st_mode), 0o600)
        key = os.path.join(self.home, KEY)
        self.assertEqual(stat.S_IMODE(os.stat(key).st_mode), 0o600)
        self.assertEqual(os.path.getsize(key), 32)

    def test_stable_with_one_key_not_with_another(self):
        _, first = self.attack(os.path.join(self.tmp, "1.jsonl"))
        _, second = self.attack(os.path.join(self.tmp, "2.jsonl"))
        hashes = lambda rs: sorted(r["targetHash"] for r in rs if r["type"] == "violation")
        self.assertEqual(hashes(first), hashes(second))
        os.unlink(os.path.join(self.home, KEY))  # a new key on the next run
        _, third = self.attack(os.path.join(self.tmp, "3.jsonl"))
        self.assertEqual(len(hashes(third)), len(hashes(first)))
        self.assertFalse(set(hashes(third)) & set(hashes(first)))

    def test_key_unreadable_inside(self):
        self.attack(os.path.join(self.tmp, "a.jsonl"))
        key = os.path.join(self.home, KEY)
        p = self.cordon("run", "--", "sh", "-c", f"cat {key} | od -An -tx1 | tr -d ' \\n'")
        with open(key, "rb") as f:
            self.assertNotIn(f.read().hex(), p.stdout.decode())
        self.assertEqual(p.stdout, b"")

    def test_bad_key_fails_closed(self):
        self.attack(os.path.join(self.tmp, "a.jsonl"))
        key = os.path.join(self.home, KEY)
        os.chmod(key, 0o644)
        p = self.cordon("run", "--analytics", os.path.join(self.tmp, "b.jsonl"), "--", "true")
        self.assertEqual(p.returncode, 125)
        self.assertRegex(p.stderr.decode(), r"^cordon: fatal: POLICY_INVALID: analytics: the "
                                             r"key .* is readable or writable by others")
        os.chmod(key, 0o600)
        with open(key, "ab") as f:
            f.write(b"x")
        p = self.cordon("run", "--analytics", os.path.join(self.tmp, "b.jsonl"), "--", "true")
        self.assertEqual(p.returncode, 125)
        self.assertIn("is not 32 bytes long", p.stderr.decode())

    def test_launch_failure_summary(self):
        out = os.path.join(self.tmp, "e.jsonl")
        p = self.cordon("run", "--analytics", out, "--writable", "/nonexistent-" + MARK, "--",
                        "true")
        self.assertEqual(p.returncode, 125)
        with open(out, encoding="utf-8") as f:
            text = f.read()
        self.assertNotIn(MARK, text)
        records = [json.loads(line) for line in text.splitlines()]
        self.validate(records)
        self.assertEqual(records[-1]["end"], "error")
        self.assertEqual(records[-1]["code"], "POLICY_INVALID")


def main():
    global CORDON, SCHEMA
    CORDON = os.path.abspath(sys.argv[1])
    with open(sys.argv[2], encoding="utf-8") as f:
        SCHEMA = json.load(f)
    unittest.main(argv=[sys.argv[0], "-v"])


if __name__ == "__main__":
    main()
