#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The denial decoder from real runs: `cordon run --events/--json` and `cordon explain` on what
real sandboxed commands did. Each classification is produced by a real run (a command exiting
125 by itself, a real launcher failure, a refused name, plain success and failure), the --json
summary is parsed and checked, and the refusal lines appear on a terminal stderr (a pty from
script(1)) but not with --quiet and not on a pipe.

Usage: test_explain.py CORDON (meson passes it)."""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

CORDON = None


class ExplainTest(unittest.TestCase):
    """Each test runs in a fresh workspace with a fresh HOME."""

    def setUp(self):
        base = os.environ.get("CORDON_TEST_TMP", "/var/tmp")
        self.tmp = tempfile.mkdtemp(prefix="cordon-explain-", dir=base)
        self.ws = os.path.realpath(os.path.join(self.tmp, "ws"))
        self.home = os.path.join(self.tmp, "home")
        os.mkdir(self.ws)
        os.mkdir(self.home, 0o700)
        self.events = os.path.join(self.tmp, "events.jsonl")
        self.summary = os.path.join(self.tmp, "summary.json")
        self.stderr_file = os.path.join(self.tmp, "stderr.txt")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def cordon(self, *args, stdin=subprocess.DEVNULL, **kw):
        """Runs cordon with args in the workspace; returns the CompletedProcess."""
        env = {"PATH": "/usr/bin:/bin", "HOME": self.home}
        return subprocess.run([CORDON, *args], cwd=self.ws, env=env, stdin=stdin,
                              capture_output=True, timeout=60, **kw)

    def run_reported(self, *args, stdin=subprocess.DEVNULL):
        """`cordon run --events E --json=S ARGS`; keeps stderr in a file as a harness would.
        Returns (status, summary dict or None, stderr text)."""
        p = self.cordon("run", "--events", self.events, f"--json={self.summary}", *args,
                        stdin=stdin)
        with open(self.stderr_file, "wb") as f:
            f.write(p.stderr)
        summary = None
        if os.path.exists(self.summary) and os.path.getsize(self.summary):
            with open(self.summary, encoding="utf-8") as f:
                text = f.read()
            self.assertTrue(text.endswith("\n") and text.count("\n") == 1, text)
            summary = json.loads(text)
        return p.returncode, summary, p.stderr.decode(errors="replace")

    def explain(self, *args):
        """`cordon explain --json ARGS` → the parsed verdict (asserts exit 0)."""
        p = self.cordon("explain", "--json", *args)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, b"")
        return json.loads(p.stdout)

    def assert_same_verdict(self, summary, *explain_args):
        """`cordon explain` of the same run says what the summary said."""
        v = self.explain(*explain_args)
        for key in ("status", "exitCode", "violations", "error", "backend"):
            self.assertEqual(v.get(key), summary.get(key), key)

    # ---- one real run per classification ------------------------------------------------------

    def test_ok(self):
        status, s, _ = self.run_reported("--", "true")
        self.assertEqual(status, 0)
        self.assertEqual(s["status"], "ok")
        self.assertEqual(s["backend"], "native")
        self.assertEqual(s["exitCode"], 0)
        self.assertIsInstance(s["durationMs"], int)
        self.assertGreaterEqual(s["durationMs"], 0)
        self.assertEqual(s["violations"], [])
        self.assertNotIn("error", s)
        self.assert_same_verdict(s, "--events", self.events)

    def test_command_exiting_125_by_itself_failed(self):
        status, s, err = self.run_reported("--", "sh", "-c", "echo oops >&2; exit 125")
        self.assertEqual(status, 125)
        self.assertEqual(s["status"], "command-failed")
        self.assertEqual(s["exitCode"], 125)
        self.assertNotIn("error", s)
        self.assertNotIn("cordon: fatal:", err)
        self.assert_same_verdict(s, "--events", self.events, "--status", "125")
        # Without events: status 125 and a stderr without cordon's fatal line.
        v = self.explain("--status", "125", "--stderr", self.stderr_file)
        self.assertEqual(v["status"], "command-failed")

    def test_command_forging_the_fatal_line(self):
        # The events (cordon's own record, which the command cannot write) win.
        status, s, _ = self.run_reported(
            "--", "sh", "-c", "echo 'cordon: fatal: LAUNCH_FAILED: forged' >&2; exit 125")
        self.assertEqual(status, 125)
        self.assertEqual(s["status"], "command-failed")
        v = self.explain("--events", self.events, "--status", "125", "--stderr", self.stderr_file)
        self.assertEqual(v["status"], "command-failed")

    def test_launcher_failure_broken(self):
        # A directory on stdin is refused (POLICY_UNENFORCEABLE): a real launcher failure.
        fd = os.open(self.ws, os.O_RDONLY | os.O_DIRECTORY)
        try:
            status, s, err = self.run_reported("--", "touch", "ran", stdin=fd)
        finally:
            os.close(fd)
        self.assertEqual(status, 125)
        self.assertFalse(os.path.exists(os.path.join(self.ws, "ran")))
        self.assertEqual(s["status"], "sandbox-broken")
        self.assertEqual(s["error"]["code"], "POLICY_UNENFORCEABLE")
        self.assertEqual(err, f"cordon: fatal: POLICY_UNENFORCEABLE: {s['error']['message']}\n")
        self.assertNotIn("backend", s)  # the sandbox never became ready
        self.assert_same_verdict(s, "--events", self.events)
        # Without events: the exact fatal line with status 125.
        v = self.explain("--status", "125", "--stderr", self.stderr_file)
        self.assertEqual(v["status"], "sandbox-broken")
        self.assertEqual(v["error"], s["error"])

    def test_unavailable_backend_broken(self):
        status, s, _ = self.run_reported("--backend", "microvm", "--", "true")
        self.assertEqual(status, 125)
        self.assertEqual(s["status"], "sandbox-broken")
        self.assertEqual(s["error"]["code"], "SANDBOX_UNAVAILABLE")
        self.assertEqual(s["requestedBackend"], "microvm")

    def test_denied_name(self):
        status, s, _ = self.run_reported("--", "sh", "-c", "touch .env; touch ok.txt; exit 1")
        self.assertEqual(status, 1)
        self.assertEqual(s["status"], "sandbox-denied")
        self.assertEqual(len(s["violations"]), 1)
        v = s["violations"][0]
        self.assertEqual(v["action"], "file-create-name")
        self.assertEqual(v["target"], os.path.join(self.ws, ".env"))
        self.assertEqual(v["rule"], ".env")
        self.assertEqual(v["count"], 1)
        self.assertEqual(v["evidence"], "observed")
        self.assertIsNone(v["change"])  # name rules cannot be lifted: the rule is named
        self.assertIn("denyCreateNames rule '.env'", v["why"])
        self.assertTrue(os.path.exists(os.path.join(self.ws, "ok.txt")))  # the allowed case
        self.assert_same_verdict(s, "--events", self.events)
        text = self.cordon("explain", "--events", self.events).stdout.decode()
        self.assertIn(f"create {self.ws}/.env (denyCreateNames .env)", text)
        self.assertIn("no policy change allows it", text)

    def test_denied_network(self):
        # The proxy refuses a name outside the allowlist before resolving it: nothing leaves
        # loopback. The exact change is the flag that allows exactly this host and port.
        status, s, _ = self.run_reported("--", "curl", "-sS", "-o", "/dev/null",
                                         "https://denied.invalid/")
        self.assertNotEqual(status, 0)
        self.assertEqual(s["status"], "sandbox-denied")
        # (curl may also trip the AF_UNIX socket() refusal: only the network entries matter.)
        net = [v for v in s["violations"] if v["action"] == "network-outbound"]
        self.assertEqual([v["target"] for v in net], ["denied.invalid:443"])
        self.assertEqual(net[0]["count"], 1)
        self.assertEqual(net[0]["change"], "--allow-domain denied.invalid:443")
        self.assertIn("ignore the proxy variables", s["notes"][0])
        status, out = self.on_tty("--", "curl", "-sS", "-o", "/dev/null", "https://denied.invalid/")
        self.assertIn("cordon: denied network denied.invalid:443 (not in allowlist)\n", out)

    def test_refused_syscall(self):
        status, s, _ = self.run_reported("--", "unshare", "-U", "true")
        self.assertNotEqual(status, 0)
        self.assertEqual(s["status"], "sandbox-denied")
        self.assertEqual([(v["action"], v["target"]) for v in s["violations"]],
                         [("syscall", "unshare")])
        self.assertIsNone(s["violations"][0]["change"])  # the filter holds in every policy
        self.assertEqual(s["notes"], [])

    def test_denied_name_but_ok(self):
        status, s, _ = self.run_reported("--", "sh", "-c", "touch a.pem 2>/dev/null; true")
        self.assertEqual(status, 0)
        self.assertEqual(s["status"], "ok")
        self.assertEqual([v["target"] for v in s["violations"]], [os.path.join(self.ws, "a.pem")])

    def test_inferred_hint_stays_command_failed(self):
        # A write outside the writable roots fails with EROFS: no violation event is observed,
        # so the words on stderr are only an inferred hint.
        status, s, _ = self.run_reported("--", "sh", "-c", "touch /usr/cordon-x")
        self.assertNotEqual(status, 0)
        self.assertEqual(s["status"], "command-failed")
        self.assertEqual(s["violations"], [])
        v = self.explain("--events", self.events, "--stderr", self.stderr_file)
        self.assertEqual(v["status"], "command-failed")
        self.assertEqual([h["kind"] for h in v["inferred"]], ["read-only-file-system"])
        self.assertEqual(v["inferred"][0]["evidence"], "inferred")
        text = self.cordon("explain", "--events", self.events, "--stderr",
                           self.stderr_file).stdout.decode()
        self.assertIn("NOT observed", text)

    # ---- no noise: glibc's name-service lookups, and what stays a refusal -----------------

    NSS_COMMANDS = ("ls -l / >/dev/null && id >/dev/null && whoami >/dev/null && "
                    "getent passwd root >/dev/null && "
                    "python3 -c 'import getpass; getpass.getuser()' && "
                    "{ ! command -v node >/dev/null || node -e 'require(\"os\").userInfo()'; }")

    def test_nss_lookups_are_no_refusals(self):
        status, s, err = self.run_reported("--", "sh", "-c", self.NSS_COMMANDS)
        self.assertEqual(status, 0, err)
        self.assertEqual((s["status"], s["violations"]), ("ok", []))
        self.assertNotIn("cordon:", err)
        v = self.explain("--events", self.events, "--stderr", self.stderr_file)
        self.assertEqual((v["status"], v["violations"]), ("ok", []))
        status, out = self.on_tty("--", "sh", "-c", "'ls -l / >/dev/null; id; whoami'")
        self.assertEqual(status, 0, out)
        self.assertNotIn("cordon: denied", out)

    def test_host_unix_socket_still_refused(self):
        # The attacker's twin of the lookups above: the same socket(AF_UNIX) + connect, aimed at
        # a host server, is refused, reported with its path, and explains the failure.
        import socket
        path = os.path.join(self.tmp, "host.sock")
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(path)
        srv.listen(4)
        os.chmod(self.tmp, 0o755)
        os.chmod(path, 0o777)
        try:
            code = (f"import socket; s = socket.socket(socket.AF_UNIX); s.connect({path!r})")
            status, s, err = self.run_reported("--", "python3", "-c", code)
            srv.setblocking(False)
            with self.assertRaises(BlockingIOError):
                srv.accept()  # nothing reached the host's server
        finally:
            srv.close()
        self.assertNotEqual(status, 0)
        self.assertIn("PermissionError", err)
        self.assertEqual(s["status"], "sandbox-denied")
        self.assertEqual([(x["action"], x["target"]) for x in s["violations"]],
                         [("network-outbound", path)])
        status, out = self.on_tty("--", "python3", "-c", f'"{code}"')
        self.assertIn(f"cordon: denied connect {path}", out)

    def write_run(self, exit_code, violations, stderr):
        """An events file of a finished run with these violations, and its stderr."""
        sid = "s-explain"
        lines = [{"type": "starting", "sessionId": sid, "time": "2026-01-01T00:00:00.000Z",
                  "backend": "auto"},
                 {"type": "ready", "sessionId": sid, "time": "2026-01-01T00:00:00.001Z",
                  "backend": "native"}]
        for action, target, rule, call in violations:
            lines.append({"type": "violation", "sessionId": sid,
                          "time": "2026-01-01T00:00:00.002Z", "action": action,
                          "target": target, "raw": {"syscall": call, "rule": rule}})
        lines.append({"type": "exit", "sessionId": sid, "time": "2026-01-01T00:00:00.003Z",
                      "exitCode": exit_code})
        with open(self.events, "w", encoding="utf-8") as f:
            f.write("".join(json.dumps(x) + "\n" for x in lines))
        with open(self.stderr_file, "w", encoding="utf-8") as f:
            f.write(stderr)

    UNRELATED = [("syscall", "socket", "socket: EPERM (AF_UNIX)", "socket")]

    def test_http_404_after_unrelated_refusals_failed(self):
        self.write_run(22, self.UNRELATED,
                       "curl: (22) The requested URL returned error: 404\n")
        v = self.explain("--events", self.events, "--stderr", self.stderr_file)
        self.assertEqual(v["status"], "command-failed", v["reason"])
        self.assertIn("points to none of the 1 refusal listed", v["reason"])
        self.assertEqual(len(v["violations"]), 1)  # still listed, only not blamed
        # The proxy's refusal in curl's words is blamed.
        self.write_run(56, [("network-outbound", "example.org:443", "not in allowlist", "http")],
                       "curl: (56) CONNECT tunnel failed, response 403\n")
        v = self.explain("--events", self.events, "--stderr", self.stderr_file)
        self.assertEqual(v["status"], "sandbox-denied")

    def test_messages_matched_ignoring_case(self):
        for text in ("error: PERMISSION DENIED: ./out\n", "fatal: permission denied\n",
                     "OSError: [Errno 1] operation not permitted\n"):
            self.write_run(1, self.UNRELATED, text)
            v = self.explain("--events", self.events, "--stderr", self.stderr_file)
            self.assertEqual(v["status"], "sandbox-denied", text)
            # Without a refusal the same words are an inferred hint, whatever their case.
            self.write_run(1, [], text)
            v = self.explain("--events", self.events, "--stderr", self.stderr_file)
            self.assertEqual(v["status"], "command-failed", text)
            self.assertEqual(len(v["inferred"]), 1, text)
            self.assertEqual(v["inferred"][0]["evidence"], "inferred")

    def test_missing_command_failed(self):
        # exec of a command that does not exist: cordon's 125, but the command's fault.
        status, s, err = self.run_reported("--", "no-such-command-here")
        self.assertEqual(status, 125)
        self.assertIn("cordon: fatal: EXEC_FAILED: ", err)
        self.assertEqual(s["status"], "command-failed", s["reason"])
        self.assertEqual(s["error"]["code"], "EXEC_FAILED")
        # The shell's 127 after unrelated refusals: not blamed on them either.
        self.write_run(127, self.UNRELATED, "sh: 1: no-such-command-here: not found\n")
        v = self.explain("--events", self.events, "--stderr", self.stderr_file)
        self.assertEqual(v["status"], "command-failed", v["reason"])
        self.assertIn("not found", v["reason"])

    def test_git_protection_named(self):
        subprocess.run(["git", "init", "-q", self.ws], check=True)
        status, s, _ = self.run_reported("--", "sh", "-c",
                                         "echo x > .git/hooks/pre-commit; touch .env")
        self.assertNotEqual(status, 0)
        by_target = {x["target"]: x for x in s["violations"]}
        hook = by_target[os.path.join(self.ws, ".git/hooks/pre-commit")]
        self.assertIn("git protection", hook["summary"])
        self.assertNotIn("denyCreateNames", hook["summary"])
        self.assertIn("mandatory git protection", hook["why"])
        env = by_target[os.path.join(self.ws, ".env")]
        self.assertIn("denyCreateNames .env", env["summary"])

    # ---- --json destinations ------------------------------------------------------------------

    def test_json_fd_and_private_file(self):
        rfd, wfd = os.pipe()
        try:
            p = self.cordon("run", f"--json=fd:{wfd}", "--", "sh", "-c",
                            f"echo forged >&{wfd} 2>/dev/null; exit 4", pass_fds=(wfd,))
        finally:
            os.close(wfd)
        with os.fdopen(rfd, encoding="utf-8") as f:
            lines = f.readlines()
        self.assertEqual(p.returncode, 4)
        self.assertEqual(len(lines), 1)  # the command could not write into it
        self.assertEqual(json.loads(lines[0])["exitCode"], 4)
        self.assertEqual(p.stdout, b"")  # nothing of the summary on stdout
        with open(self.summary, "w", encoding="utf-8") as f:
            f.write("old junk\n" * 50)
        os.unlink(self.summary)
        self.cordon("run", f"--json={self.summary}", "--", "true")
        self.assertEqual(stat.S_IMODE(os.stat(self.summary).st_mode), 0o600)

    def test_json_usage(self):
        for args, msg in [(["--json", "true"], b"--json needs a destination"),
                          (["--json=fd:1", "true"], b"is not a usable descriptor"),
                          ([f"--json={self.events}", "--events", self.events, "true"],
                           b"need different destinations"),
                          (["--capture", "true"], b"--capture needs --events")]:
            p = self.cordon("run", *args)
            self.assertEqual(p.returncode, 125, args)
            self.assertIn(msg, p.stderr)
            self.assertEqual(p.stderr.count(b"\n"), 1)

    def test_explain_usage(self):
        p = self.cordon("explain")
        self.assertEqual(p.returncode, 125)
        self.assertIn(b"nothing to explain", p.stderr)
        p = self.cordon("explain", "--status", "256")
        self.assertIn(b"not an exit status 0-255", p.stderr)
        p = self.cordon("explain", "--events", os.path.join(self.tmp, "none"))
        self.assertEqual(p.returncode, 125)
        self.assertIn(b"cordon: fatal: USAGE: --events: cannot open", p.stderr)
        with open(self.events, "w", encoding="utf-8") as f:
            f.write('{"type":"starting"}\n{"type":\n')
        p = self.cordon("explain", "--events", self.events)
        self.assertEqual(p.returncode, 125)
        self.assertIn(b"events line 2:", p.stderr)
        with open(self.events, "w", encoding="utf-8") as f:
            f.write('{"type":"starting"}\n')
        p = self.cordon("explain", "--events", self.events)
        self.assertIn(b"nothing tells how the run ended", p.stderr)

    # ---- refusal lines on a terminal ---------------------------------------------------------

    def on_tty(self, *args):
        """cordon run ARGS with stdin, stdout and stderr on a pty (script(1)); the output."""
        cmd = " ".join(["exec", CORDON, "run", *args])
        p = subprocess.run(["script", "-qfec", cmd, "/dev/null"], cwd=self.ws,
                           env={"PATH": "/usr/bin:/bin", "HOME": self.home, "TERM": "dumb"},
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        return p.returncode, p.stdout.decode(errors="replace").replace("\r\n", "\n")

    def test_tty_lines(self):
        status, out = self.on_tty("--", "sh", "-c", "'touch .env x.pem .env 2>/dev/null; exit 3'")
        self.assertEqual(status, 3)
        self.assertIn(f"cordon: denied create {self.ws}/.env (denyCreateNames .env), 2 times\n",
                      out)
        self.assertIn(f"cordon: denied create {self.ws}/x.pem (denyCreateNames *.pem)\n", out)
        self.assertEqual(out.count("cordon: denied"), 2)
        status, out = self.on_tty("--quiet", "--", "sh", "-c", "'touch .env 2>/dev/null; exit 3'")
        self.assertEqual(status, 3)
        self.assertNotIn("cordon:", out)
        status, out = self.on_tty("--", "true")
        self.assertEqual((status, out), (0, ""))

    def test_tty_lines_come_before_the_fatal_line(self):
        status, out = self.on_tty("--timeout", "1s", "--", "sh", "-c",
                                  "'touch .env 2>/dev/null; sleep 30'")
        self.assertEqual(status, 125)
        lines = out.strip().split("\n")
        self.assertTrue(lines[0].startswith("cordon: denied create"), out)
        self.assertTrue(lines[-1].startswith("cordon: fatal: TIMEOUT:"), out)

    def test_no_lines_when_stderr_is_not_a_terminal(self):
        p = self.cordon("run", "--", "sh", "-c", "touch .env 2>/dev/null; exit 3")
        self.assertEqual(p.returncode, 3)
        self.assertEqual(p.stderr, b"")


def main():
    """Takes CORDON off argv, then runs the tests."""
    global CORDON
    CORDON = os.path.abspath(sys.argv[1])
    unittest.main(argv=[sys.argv[0], "-v"])


if __name__ == "__main__":
    main()
