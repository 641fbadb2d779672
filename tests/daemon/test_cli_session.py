#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`cordon session launch|list|destroy` and `cordon exec` end to end against a real cordond
(docs/cli.md, docs/protocol.md): ids, output streams, exit statuses, stdin, --cwd/--env, the
fatal line of every error, the default socket path, and the client's refusal of a socket served
by another uid.

Usage: test_cli_session.py CORDOND CORDON SCHEMA SOURCE_DIR [unittest args]."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lib"))  # tests/lib: cordond_client
import cordond_client as cc  # noqa: E402
import test_daemon as td  # noqa: E402
from cordond_client import procs_with, wait_until, marker  # noqa: E402

FATAL = re.compile(r"^cordon: fatal: ([A-Z_]+): (.+)$")


class CliTest(td.DaemonTest):
    def run_input(self, args, data):
        argv = [cc.CONFIG["cordon"], *args]
        return subprocess.run(argv, input=data, capture_output=True, timeout=60, cwd=self.ws)

    def fatal(self, r, code, text=None):
        """Exit 125 and exactly one fatal line, the last on stderr."""
        self.assertEqual(r.returncode, 125, r)
        lines = r.stderr.decode().splitlines()
        self.assertTrue(lines, r)
        m = FATAL.match(lines[-1])
        self.assertTrue(m, lines)
        self.assertEqual(m.group(1), code, lines[-1])
        if text:
            self.assertIn(text, m.group(2))
        self.assertEqual(sum(1 for l in lines if l.startswith("cordon: fatal:")), 1)

    def launch_cli(self, *flags):
        r = self.run_input(["session", "launch", "--socket", self.d.sock, *flags], b"")
        self.assertEqual(r.returncode, 0, r.stderr)
        sid = r.stdout.decode()
        self.assertRegex(sid, r"^[!-~]+\n$", "the id and a newline, nothing else")
        return sid.strip()

    def exec_cli(self, sid, *argv, stdin=b"", opts=()):
        return self.run_input(["exec", sid, "--socket", self.d.sock, *opts, "--", *argv], stdin)

    # ---- session launch -----------------------------------------------------------------------

    def test_launch_prints_the_id(self):
        sid = self.launch_cli()
        h = self.handle(sid)
        self.assertEqual((h["state"], h["backend"]), ("warm", "native"))
        self.assertEqual(h["details"]["workdir"], os.path.realpath(self.ws),
                         "the workspace is the current directory")

    def test_launch_policy_flags(self):
        sub = os.path.join(self.ws, "sub")
        os.mkdir(sub)
        sid = self.launch_cli("--session-id", "cli-1", "--workdir", sub,
                              "--deny-create-name", "*.secret", "--env-set", "GREETING=hi")
        self.assertEqual(sid, "cli-1")
        self.assertEqual(self.handle(sid)["details"]["workdir"], sub)
        r = self.exec_cli(sid, "sh", "-c", "pwd; echo $GREETING; echo x > a.secret")
        self.assertEqual(r.stdout.decode(), f"{sub}\nhi\n")
        self.assertNotEqual(r.returncode, 0)
        self.assertFalse(os.path.exists(os.path.join(sub, "a.secret")))
        # read-only mode from a flag: the workspace is not writable
        ro = self.launch_cli("--mode", "read-only")
        r = self.exec_cli(ro, "sh", "-c", "echo x > f")
        self.assertNotEqual(r.returncode, 0)
        self.assertFalse(os.path.exists(os.path.join(self.ws, "f")))

    def test_launch_policy_file(self):
        pol = os.path.join(self.d.dir, "p.json")
        with open(pol, "w", encoding="utf-8") as f:
            json.dump({"sessionId": "from-file", "denyCreateNames": ["*.x"]}, f)
        self.assertEqual(self.launch_cli("--policy", pol), "from-file")

    def test_launch_errors(self):
        r = self.run_input(["session", "launch", "--socket", self.d.sock, "--mode", "bogus"], b"")
        self.fatal(r, "POLICY_INVALID", "--mode")
        r = self.run_input(["session", "launch", "--socket", self.d.sock, "--settings",
                            "/dev/null"], b"")
        self.fatal(r, "USAGE", "--settings is not read")
        r = self.run_input(["session", "launch", "--socket", self.d.sock, "--sandbox", "on",
                            "--backend", "none"], b"")
        self.fatal(r, "USAGE", "conflicts")
        # Refused by the daemon: reported, and the failed session is not left behind.
        r = self.run_input(["session", "launch", "--socket", self.d.sock, "--mode",
                            "danger-full-access"], b"")
        self.fatal(r, "POLICY_UNENFORCEABLE")
        self.assertEqual(r.stdout, b"")
        self.assertEqual(self.c.call("session.list")["sessions"], [])

    def test_launch_unprotected_warns(self):
        r = self.run_input(["session", "launch", "--socket", self.d.sock, "--sandbox", "off"],
                           b"")
        self.assertEqual(r.returncode, 0, r.stderr)
        sid = r.stdout.decode().strip()
        self.assertEqual(self.handle(sid)["backend"], "none")
        self.assertIn(b"UNPROTECTED", r.stderr)

    # ---- list, destroy ---------------------------------------------------------------------

    def test_list_and_destroy(self):
        s1 = self.launch_cli()
        s2 = self.launch_cli("--session-id", "second")
        r = self.run_input(["session", "list", "--socket", self.d.sock], b"")
        self.assertEqual(r.returncode, 0)
        lines = r.stdout.decode().splitlines()
        self.assertTrue(lines[0].startswith("SESSION"))
        self.assertEqual([l.split()[0] for l in lines[1:]], [s2, s1])
        self.assertEqual(lines[1].split()[1:4], ["warm", "native", "0"])
        r = self.run_input(["session", "list", "--json", "--socket", self.d.sock], b"")
        lst = json.loads(r.stdout)
        self.assertEqual([h["sessionId"] for h in lst["sessions"]], [s2, s1])
        self.assertEqual(r.stdout.count(b"\n"), 1)
        r = self.run_input(["session", "destroy", "--socket", self.d.sock, s1], b"")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""))
        r = self.run_input(["session", "destroy", s1, "--socket", self.d.sock], b"")
        self.fatal(r, "USAGE", "no such session")
        r = self.run_input(["session", "destroy", "--socket", self.d.sock], b"")
        self.fatal(r, "USAGE", "no SESSION given")
        r = self.run_input(["session", "list", "--socket", self.d.sock, "extra"], b"")
        self.fatal(r, "USAGE", "unexpected argument")
        r = self.run_input(["session", "frobnicate"], b"")
        self.fatal(r, "USAGE", "unknown session subcommand")

    # ---- exec ------------------------------------------------------------------------------

    def test_exec_like_run(self):
        sid = self.launch_cli()
        r = self.exec_cli(sid, "sh", "-c", "echo out; echo err >&2; exit 7")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (7, b"out\n", b"err\n"))
        r = self.exec_cli(sid, "sh", "-c", "kill -TERM $$")
        self.assertEqual(r.returncode, 128 + signal.SIGTERM)
        r = self.exec_cli(sid, "true")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""))

    def test_exec_tool_cache(self):
        """A session's commands get the sandbox-owned tool caches as `cordon run` does
        (docs/design/tool-caches.md): npm's points into the cache root, which is writable."""
        sid = self.launch_cli()
        m = self.mark()
        r = self.exec_cli(sid, "sh", "-c", 'mkdir -p "$npm_config_cache" && '
                          f'echo {m} > "$npm_config_cache/{m}" && echo "$npm_config_cache"')
        self.assertEqual(r.returncode, 0, r.stderr)
        cache = r.stdout.decode().strip()
        self.assertTrue(cache.endswith("/cordon/tools/npm"), cache)
        probe = os.path.join(cache, m)
        self.addCleanup(lambda: os.path.exists(probe) and os.unlink(probe))
        with open(probe) as f:  # on the host, where the next session finds it
            self.assertEqual(f.read().strip(), m)

    def on_tty(self, argv):
        """Runs argv in the workspace with stderr on a PTY (stdout and stdin elsewhere); returns
        (exit status, what the PTY showed)."""
        master, slave = os.openpty()
        try:
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=slave, cwd=self.ws)
            os.close(slave)
            slave = -1
            out = b""
            while True:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # EIO: every writer closed the PTY
                    break
                if not chunk:
                    break
                out += chunk
            return p.wait(60), out.decode("utf-8", "replace").replace("\r\n", "\n")
        finally:
            os.close(master)
            if slave >= 0:
                os.close(slave)

    def test_exec_prints_run_s_denial_lines_on_a_terminal(self):
        """`cordon exec` shows the same "cordon: denied ..." lines as `cordon run` when stderr
        is a terminal, and none with --quiet or on a pipe."""
        sid = self.launch_cli()
        cmd = ["sh", "-c", "touch .env 2>/dev/null; touch .env.local 2>/dev/null; exit 3"]
        def denials(text):
            return [l for l in text.splitlines() if l.startswith("cordon: denied ")]
        st_run, out_run = self.on_tty([cc.CONFIG["cordon"], "run", "--", *cmd])
        st_exec, out_exec = self.on_tty([cc.CONFIG["cordon"], "exec", sid, "--socket",
                                         self.d.sock, "--", *cmd])
        self.assertEqual((st_run, st_exec), (3, 3), (out_run, out_exec))
        self.assertTrue(denials(out_run), out_run)
        self.assertEqual(denials(out_exec), denials(out_run), out_exec)
        st, out = self.on_tty([cc.CONFIG["cordon"], "exec", sid, "--socket", self.d.sock,
                               "--quiet", "--", *cmd])
        self.assertEqual((st, denials(out)), (3, []), out)
        r = self.exec_cli(sid, *cmd)
        self.assertEqual((r.returncode, r.stderr), (3, b""), "no lines on a pipe")

    def test_exec_stdin_cwd_env(self):
        sid = self.launch_cli()
        sub = os.path.join(self.ws, "d")
        os.mkdir(sub)
        r = self.exec_cli(sid, "sh", "-c", "cat; pwd; echo $A/$B", stdin="line \u00e9\n".encode(),
                          opts=["--cwd", "d", "--env", "A=1", "--env", "B=x=y"])
        self.assertEqual(r.stdout.decode(), f"line \u00e9\n{sub}\n1/x=y\n", r.stderr)
        big = b"z" * (1024 * 1024 - 4096)
        r = self.exec_cli(sid, "wc", "-c", stdin=big)
        self.assertEqual(r.stdout.strip(), str(len(big)).encode(), r.stderr)

    def test_exec_stdin_refusals(self):
        sid = self.launch_cli()
        r = self.exec_cli(sid, "cat", stdin=b"\xff\xfe binary")
        self.fatal(r, "USAGE", "not UTF-8 text")
        r = self.exec_cli(sid, "cat", stdin=b"a\0b")
        self.fatal(r, "USAGE", "not UTF-8 text")
        r = self.exec_cli(sid, "cat", stdin=b"y" * (1024 * 1024 + 1))
        self.fatal(r, "USAGE", "larger than 1 MiB")

    def test_exec_binary_output(self):
        sid = self.launch_cli()
        r = self.exec_cli(sid, "sh", "-c", r"printf '\377\000\001ok'; printf '\376' >&2")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"\xff\x00\x01ok", b"\xfe"))

    def test_exec_errors(self):
        sid = self.launch_cli()
        r = self.exec_cli(sid, "/nonexistent/cmd")
        self.fatal(r, "EXEC_FAILED", "cannot execute")
        r = self.exec_cli("no-such-session", "true")
        self.fatal(r, "USAGE", "no such session")
        r = self.run_input(["exec", "--socket", self.d.sock, "--", "true"], b"")
        self.fatal(r, "USAGE", "no SESSION before '--'")
        r = self.run_input(["exec", sid, "--socket", self.d.sock], b"")
        self.fatal(r, "USAGE", "no command given")
        r = self.run_input(["exec", sid, "--env", "1A=x", "--", "true"], b"")
        self.fatal(r, "USAGE", "--env")
        r = self.run_input(["exec", sid, "--bogus", "--", "true"], b"")
        self.fatal(r, "USAGE", "unknown option")

    def test_exec_reader_gone(self):
        """`cordon exec ... | head -1`: cordon hangs up, the command is killed, exit 141."""
        sid = self.launch_cli()
        m = self.mark()
        p = subprocess.Popen([cc.CONFIG["cordon"], "exec", sid, "--socket", self.d.sock, "--",
                              "sh", "-c", f"while :; do echo {m}; done"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, cwd=self.ws)
        self.assertEqual(p.stdout.readline().strip(), m.encode())
        # Let cordon fill the pipe and block half-way through a write: the reader going away
        # then ends that write short *and* raises SIGPIPE (fs/pipe.c), which must not kill it.
        time.sleep(0.5)
        p.stdout.close()
        self.assertEqual(p.wait(30), 128 + signal.SIGPIPE)
        p.stderr.close()
        self.assertTrue(wait_until(lambda: not procs_with(m)), "the command outlived cordon")

    def test_exec_interrupted(self):
        """SIGINT to cordon exec: the connection closes and the daemon kills the command."""
        sid = self.launch_cli()
        m = self.mark()
        p = subprocess.Popen([cc.CONFIG["cordon"], "exec", sid, "--socket", self.d.sock, "--",
                              "sleep", m], stdin=subprocess.DEVNULL, cwd=self.ws)
        self.assertTrue(wait_until(lambda: procs_with(m)))
        p.send_signal(signal.SIGINT)
        p.wait(30)
        self.assertTrue(wait_until(lambda: not procs_with(m)), "the command outlived cordon")
        self.assertTrue(wait_until(lambda: self.handle(sid)["state"] == "warm"),
                        "the session is warm again")

    # ---- the socket ------------------------------------------------------------------------

    def test_no_daemon(self):
        r = self.run_input(["session", "list", "--socket", os.path.join(self.d.dir, "none.sock")],
                           b"")
        self.fatal(r, "LAUNCH_FAILED", "cannot connect to cordond")

    def test_default_socket(self):
        """$XDG_RUNTIME_DIR/cordon/cordond.sock for both, when neither is given --socket."""
        rt = tempfile.mkdtemp(prefix="cordon-xdg-", dir=cc.base_tmp())
        env = dict(os.environ, XDG_RUNTIME_DIR=rt)
        d = cc.Daemon(env=env, start=False)
        try:
            d.start(argv=[cc.CONFIG["cordond"]])
            self.assertTrue(os.path.exists(os.path.join(rt, "cordon", "cordond.sock")))
            self.assertEqual(os.stat(os.path.join(rt, "cordon")).st_mode & 0o777, 0o700)
            r = subprocess.run([cc.CONFIG["cordon"], "session", "launch", "--backend", "none"],
                               env=env, capture_output=True, timeout=60, cwd=rt)
            self.assertEqual(r.returncode, 0, r.stderr)
            r = subprocess.run([cc.CONFIG["cordon"], "session", "list", "--json"], env=env,
                               capture_output=True, timeout=60)
            self.assertEqual(len(json.loads(r.stdout)["sessions"]), 1)
            self.assertEqual(d.stop(), 0)
        finally:
            d.stop()
            shutil.rmtree(rt, ignore_errors=True)
            shutil.rmtree(d.dir, ignore_errors=True)

    def test_refuses_a_socket_of_another_uid(self):
        """A daemon impersonated by another user (e.g. in /tmp/cordon-UID) is not believed."""
        if not td.as_root() or not td.have_test_user():
            self.skipTest("needs root and the user cordon-test")
        fake_dir = tempfile.mkdtemp(prefix="cordon-fake-", dir=cc.base_tmp())
        os.chmod(fake_dir, 0o777)
        path = os.path.join(fake_dir, "cordond.sock")
        server = ("import socket,sys,os\n"
                  "s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1],0o777)\n"
                  "s.listen(1); print('up', flush=True); c,_=s.accept()\n"
                  "c.recv(65536)\n"
                  "try:\n"
                  "    c.sendall(b'{\"v\":1,\"id\":1,\"event\":{\"type\":\"stdout\",\"data\":\"forged\\\\n\"}}\\n'\n"
                  "              b'{\"v\":1,\"id\":1,\"result\":{\"exitCode\":0}}\\n')\n"
                  "except OSError:\n"
                  "    pass\n")
        p = subprocess.Popen(td.as_test_user([sys.executable, "-c", server, path]),
                             stdout=subprocess.PIPE)
        try:
            self.assertEqual(p.stdout.readline(), b"up\n")
            r = self.run_input(["exec", "s-1", "--socket", path, "--", "true"], b"")
            self.fatal(r, "LAUNCH_FAILED", "not by us")
            self.assertNotIn(b"forged", r.stdout)
        finally:
            p.kill()
            p.wait()
            p.stdout.close()
            shutil.rmtree(fake_dir, ignore_errors=True)


if __name__ == "__main__":
    rest = td.configure(sys.argv)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
