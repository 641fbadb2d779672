#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""session.terminal over cordond's socket with a real interactive program (sh -i in a PTY):
backend native inside the session's sandbox and backend none (the user's own shell), input,
resize, close, the refusal of a native terminal a session cannot provide, `cordon terminal`, and
managed settings that forbid unsandboxed commands refusing a host terminal.

Usage: test_terminal.py CORDOND CORDON SCHEMA SOURCE_DIR [unittest args]"""
import os
import pty
import select
import shutil
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lib"))  # tests/lib: cordond_client
import cordond_client as cc  # noqa: E402
import test_daemon as td  # noqa: E402


def stuck_where(pids):
    """"PID comm state wchan" of each pid and its children, for a test that stalls."""
    out, seen = [], set()
    todo = list(pids) if isinstance(pids, (list, set)) else []
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/stat", encoding="utf-8") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            with open(f"/proc/{p}/comm", encoding="utf-8") as f:
                comm = f.read().strip()
            with open(f"/proc/{p}/wchan", encoding="utf-8") as f:
                wchan = f.read().strip()
            for t in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{t}/children", encoding="utf-8") as f:
                    todo += [int(c) for c in f.read().split()]
        except OSError:
            continue
        out.append(f"{p} {comm} {state} {wchan}")
    return "; ".join(out)


class TerminalTest(td.DaemonTest):
    def open_terminal(self, sid, backend=None, cols=80, rows=24):
        params = {"sessionId": sid, "cols": cols, "rows": rows}
        if backend:
            params["backend"] = backend
        return self.c.start("session.terminal", params)

    def read_until(self, rid, text, timeout=10.0):
        """Output of terminal rid until it contains `text` (the events seen are returned too)."""
        out, events = "", []
        deadline = time.monotonic() + timeout
        while text not in out and time.monotonic() < deadline:
            try:
                msg = self.c.read()
            except TimeoutError:
                self.fail(f"nothing more from the daemon; the terminal showed {out!r}, events "
                          f"{events}; daemon stderr: {self.d.stderr()[-2000:]}")
            self.assertIsNotNone(msg, "the daemon hung up")
            if msg.get("id") != rid:
                continue  # the answers to input/resize
            self.assertIn("event", msg, f"the terminal ended early: {msg}")
            events.append(msg["event"])
            if msg["event"]["type"] == "stdout":
                out += msg["event"]["data"]
        self.assertIn(text, out)
        return out, events

    def finish(self, rid, events=None):
        """The terminal's final response; the events before it are appended to `events`."""
        while True:
            try:
                msg = self.c.read()
            except TimeoutError:
                self.fail(f"terminal {rid} never ended; the daemon's processes: "
                          f"{stuck_where(cc.procs_with(self.d.sock))}; daemon stderr: "
                          f"{self.d.stderr()[-2000:]}")
            self.assertIsNotNone(msg)
            if msg.get("id") == rid and "event" in msg and events is not None:
                events.append(msg["event"])
            if msg.get("id") == rid and "event" not in msg:
                return msg

    def control(self, method, params):
        self.c.start(method, params)

    def test_native_shell_inside_the_sandbox(self):
        sid = self.launch_warm()
        rid = self.open_terminal(sid, "native")
        self.control("terminal.resize", {"terminalId": rid, "cols": 101, "rows": 33})
        self.control("terminal.input", {"terminalId": rid, "data":
                                        "stty size; echo x$((6*7)); touch .env; echo rc=$?\n"})
        out, events = self.read_until(rid, "rc=1")
        self.assertIn("33 101", out, "the resize reached the PTY")
        self.assertIn("x42", out, "the shell ran the input")
        ready = [e for e in events if e["type"] == "ready"]
        self.assertEqual(ready[0]["backend"], "native")
        self.control("terminal.input", {"terminalId": rid, "data": "exit 7\n"})
        # The supervisor's violation event and the PTY's output travel separately: "rc=1" may
        # arrive first. Every event comes before the terminal's final response.
        resp = self.finish(rid, events)
        self.assertEqual(resp["result"]["exitCode"], 7, resp)
        self.assertTrue(any(e["type"] == "violation" and e["target"].endswith("/.env")
                            for e in events), "the creation rule holds in the terminal")
        self.assertFalse(os.path.exists(os.path.join(self.ws, ".env")))

    def test_none_is_the_users_shell(self):
        sid = self.launch_warm()
        rid = self.open_terminal(sid)  # default backend: none
        self.control("terminal.input", {"terminalId": rid, "data": "tty; exit 0\n"})
        out, events = self.read_until(rid, "/dev/pts/")
        ready = [e for e in events if e["type"] == "ready"]
        self.assertEqual(ready[0]["backend"], "none", "the events say it is unconfined")
        self.assertEqual(self.finish(rid)["result"]["exitCode"], 0)

    def test_close_kills_the_shell(self):
        sid = self.launch_warm()
        m = self.mark()
        rid = self.open_terminal(sid, "native")
        self.control("terminal.input", {"terminalId": rid,
                                        "data": f"sh -c 'sleep 600; : {m}'\n"})
        self.assertTrue(cc.wait_until(lambda: cc.procs_with(m)), "the shell started sleep")
        self.control("terminal.close", {"terminalId": rid})
        resp = self.finish(rid)
        self.assertIn("result", resp)
        self.assertTrue(cc.wait_until(lambda: not cc.procs_with(m)), "close killed its tree")

    def test_microvm_refused_in_a_native_session(self):
        """A client that asked for a VM never gets the host's kernel: a native session refuses
        a microvm terminal, and starts nothing."""
        sid = self.launch_warm()
        events, resp = self.c.request("session.terminal", {"sessionId": sid, "cols": 80,
                                                           "rows": 24, "backend": "microvm"})
        self.assertError(resp, "SANDBOX_UNAVAILABLE", "a microvm terminal needs a microvm "
                         "session")
        self.assertEqual(events, [])
        _, resp = self.c.request("session.terminal", {"sessionId": sid, "cols": 80, "rows": 24,
                                                      "backend": "docker"})
        self.assertError(resp, "USAGE", "\"none\", \"native\" or \"microvm\"")

    def test_native_refused_without_a_sandbox(self):
        h = self.launch(backend="none")
        _, resp = self.c.request("session.terminal", {"sessionId": h["sessionId"], "cols": 80,
                                                      "rows": 24, "backend": "native"})
        self.assertError(resp, "SANDBOX_UNAVAILABLE", "terminals need")
        _, resp = self.c.request("terminal.input", {"terminalId": 999, "data": "x"})
        self.assertError(resp, "USAGE", "no such terminal")
        _, resp = self.c.request("session.terminal", {"sessionId": h["sessionId"], "cols": 0,
                                                      "rows": 24})
        self.assertError(resp, "USAGE", "params.cols")

    def test_cordon_terminal_cli(self):
        """`cordon terminal SESSION --native` on a real PTY: what is typed runs in the
        session's sandbox, and the shell's exit status is cordon's."""
        sid = self.launch_warm()
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(cc.CONFIG["cordon"], [cc.CONFIG["cordon"], "terminal", "--socket",
                                           self.d.sock, "--native", sid])
        out = b""

        def read_for(text, timeout=10.0):
            nonlocal out
            deadline = time.monotonic() + timeout
            while text not in out and time.monotonic() < deadline:
                r, _, _ = select.select([fd], [], [], 0.2)
                if r:
                    try:
                        out += os.read(fd, 4096)
                    except OSError:
                        break
            return text in out

        os.write(fd, b"echo in-$((40+2))\n")
        self.assertTrue(read_for(b"in-42"), out)
        os.write(fd, b"exit 3\n")
        read_for(b"\x00never", 3.0)
        _, status = os.waitpid(pid, 0)
        os.close(fd)
        self.assertEqual(os.waitstatus_to_exitcode(status), 3, out)


class ManagedForbidsUnsandboxed(td.DaemonTest):
    """allowUnsandboxedCommands: false in the administrator's managed settings: a host terminal
    and a backend-none session are unconfined commands, refused like `cordon run --sandbox off`
    (the daemon's policies are resolved, so no launch enforces the switch for them)."""

    open_terminal = TerminalTest.open_terminal
    control = TerminalTest.control
    finish = TerminalTest.finish

    @classmethod
    def setUpClass(cls):
        cls.managed_dir = tempfile.mkdtemp(prefix="cordon-managed-")
        path = os.path.join(cls.managed_dir, "managed-settings.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write('{"allowUnsandboxedCommands": false}\n')
        cls.daemon_env = {"CORDON_MANAGED_SETTINGS": path}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.managed_dir, ignore_errors=True)

    def test_host_terminal_refused(self):
        sid = self.launch_warm()
        _, resp = self.c.request("session.terminal", {"sessionId": sid, "cols": 80, "rows": 24})
        self.assertError(resp, "POLICY_INVALID", "allowUnsandboxedCommands")
        rid = self.open_terminal(sid, "native")  # inside the sandbox: allowed
        self.control("terminal.input", {"terminalId": rid, "data": "exit 4\n"})
        self.assertEqual(self.finish(rid)["result"]["exitCode"], 4)

    def test_backend_none_session_refused(self):
        h = self.launch(backend="none")  # a session in state "error", with the reason
        self.assertEqual(h["state"], "error", h)
        self.assertEqual(h["error"]["code"], "POLICY_INVALID", h)
        self.assertIn("allowUnsandboxedCommands", h["error"]["message"])


if __name__ == "__main__":
    rest = td.configure(sys.argv)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
