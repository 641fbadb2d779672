#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""cordond's session.terminal on a warm microvm session (docs/design/microvm.md "Terminals"):
one session, booted once, serves every check below, as root and as cordon-test (cordond run as
that user):

- a terminal (backend microvm) runs an interactive guest shell on a PTY of the guest's own:
  `tty` names /dev/pts/N, `stty size` is the size the request gave;
- terminal.resize reaches the guest (a WINCH trap runs, `stty size` prints the new size);
- a line typed into `cat` comes back (the guest's echo and cat's copy), ^D ends cat;
- ^C (0x03) interrupts a `sleep` in the guest (status 130) and the shell goes on;
- while the terminal runs, a session.exec runs beside it in the same VM (its own output and
  exit code), and the shell goes on;
- `exit 5` is the terminal's exitCode;
- backend native in a microvm session is its VM too (the events name microvm);
- terminal.close while the guest shell runs a `sleep` hangs it up: exitCode 129 (SIGHUP), no
  sleep left in the guest, and the same VM serves the next exec.
(A microvm terminal on a native session is refused: tests/daemon/test_terminal.py.)

The accelerator is KVM when the probe finds hardware KVM, else TCG (policy microvm.accel).
CORDON_TEST_MUST_WORK=1 makes a host without qemu or the guest kernel a failure.

Usage: test_microvm_terminal.py CORDOND CORDON"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

from mvlib import daemon_in, microvm_accel, users, vmm_pids  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import cordond_client as cc  # noqa: E402

CORDOND = CORDON = None
MUST_WORK = os.environ.get("CORDON_TEST_MUST_WORK") == "1"
# The guest shell's prompt, set through its argv (a terminal request carries no environment).
SHELL = ["/bin/sh", "-c", "PS1='mv$ '; export PS1; exec /bin/sh -i"]




class MicrovmTerminal(unittest.TestCase):
    """The shared session's checks, in order."""

    def setUp(self):
        self.accel = microvm_accel(self, CORDON, MUST_WORK)
        self.before = vmm_pids()
        self.dir = tempfile.mkdtemp(prefix="cordon-mvt-", dir=cc.base_tmp())
        os.chmod(self.dir, 0o755)
        self.ws = os.path.join(self.dir, "ws")
        os.mkdir(self.ws)
        self.d = daemon_in(cc, self.dir)
        self.c = cc.Client(self.d.sock, timeout=120)

    def tearDown(self):
        self.c.close()
        status = self.d.stop()
        err = self.d.stderr()
        shutil.rmtree(self.dir, ignore_errors=True)
        self.assertEqual(status, 0, f"cordond exit status {status}; stderr:\n{err}")

    # ---- driving a terminal ----------------------------------------------------------------

    def control(self, method, params):
        """terminal.input/resize/close: their {} answers interleave with the terminal's events,
        which are kept for read_until."""
        rid = self.c.start(method, params)
        self.pending.append(rid)
        return rid

    def read_until(self, tid, pattern, timeout=60.0):
        """The terminal's output from here until it matches `pattern` (a regex)."""
        deadline = time.monotonic() + timeout
        while not re.search(pattern, self.out):
            self.c.sock.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                msg = self.c.read()
            except TimeoutError:
                self.fail(f"{pattern!r} never came; the terminal showed {self.out!r}")
            self.assertIsNotNone(msg, "the daemon hung up")
            if msg.get("id") in self.pending:
                self.assertEqual(msg.get("result"), {}, msg)
                self.pending.remove(msg["id"])
                continue
            self.assertEqual(msg.get("id"), tid, msg)
            self.assertIn("event", msg, f"the terminal ended early: {msg}; showed {self.out!r}")
            if msg["event"]["type"] == "stdout":
                self.out += msg["event"]["data"]
            if msg["event"]["type"] == "ready":
                self.ready_backend = msg["event"].get("backend")
        self.c.sock.settimeout(120)
        m = re.search(pattern, self.out)
        seen, self.out = self.out[:m.end()], self.out[m.end():]
        return seen, m

    def finish(self, tid):
        """The terminal's response (the rest of its events and the control answers read)."""
        while True:
            msg = self.c.read()
            self.assertIsNotNone(msg, "the daemon hung up")
            if msg.get("id") in self.pending:
                self.pending.remove(msg["id"])
                continue
            self.assertEqual(msg.get("id"), tid, msg)
            if "event" not in msg:
                return msg
            if msg["event"]["type"] == "stdout":
                self.out += msg["event"]["data"]

    def type(self, tid, data):
        self.control("terminal.input", {"terminalId": tid, "data": data})

    def shell(self, sid, rows, cols, backend="microvm"):
        """A terminal running the guest shell, at its first prompt; its events name microvm."""
        self.out, self.pending, self.ready_backend = "", [], None
        tid = self.c.start("session.terminal", {"sessionId": sid, "cols": cols, "rows": rows,
                                                "backend": backend, "argv": SHELL})
        self.read_until(tid, r"mv\$ ")
        self.assertEqual(self.ready_backend, "microvm")
        return tid

    def cmd(self, tid, line, pattern):
        """Types a line into the guest shell; its output up to `pattern` and the next prompt."""
        self.type(tid, line + "\n")
        seen, m = self.read_until(tid, pattern)
        self.read_until(tid, r"mv\$ ")
        return seen, m

    def exec(self, sid, argv, client=None):
        return (client or self.c).request("session.exec", {"sessionId": sid, "argv": argv})

    @staticmethod
    def output(events):
        return "".join(e["data"] for e in events if e["type"] == "stdout")

    # ---- the checks ------------------------------------------------------------------------

    def interactive(self, sid):
        """A shell's life: its tty, size, resize, a line into cat, ^C, an exec beside it, exit."""
        tid = self.shell(sid, 30, 100)
        _, m = self.cmd(tid, "tty", r"(/dev/pts/\d+|not a tty)\r\n")
        self.assertRegex(m.group(1), r"^/dev/pts/\d+$")
        _, m = self.cmd(tid, "stty size", r"(\d+ \d+)\r\n")
        self.assertEqual(m.group(1), "30 100")

        # The resize: SIGWINCH to the guest's foreground job, whose trap prints the new size.
        # The trap is set before ARMED is printed; the resize comes after it.
        self.type(tid, "sh -c 'trap \"stty size; exit 0\" WINCH; echo ARM\"\"ED; "
                       "while :; do sleep 1; done'\n")
        self.read_until(tid, r"\r\nARMED\r\n")
        self.control("terminal.resize", {"terminalId": tid, "cols": 120, "rows": 40})
        _, m = self.read_until(tid, r"(\d+ \d+)\r\n")
        self.assertEqual(m.group(1), "40 120")
        self.read_until(tid, r"mv\$ ")
        _, m = self.cmd(tid, "stty size", r"(\d+ \d+)\r\n")
        self.assertEqual(m.group(1), "40 120")

        # A line into cat: the guest's echo, then cat's copy; ^D ends cat.
        self.type(tid, "cat\n")
        self.read_until(tid, r"cat\r\n")
        self.type(tid, "typed line\n")
        self.read_until(tid, r"typed line\r\ntyped line\r\n")
        self.type(tid, "\x04")
        self.read_until(tid, r"mv\$ ")

        # ^C interrupts the guest's foreground job, not the terminal. SLEEPING is printed by
        # the job itself, in its own process group: the ^C after it reaches the job.
        self.type(tid, "sh -c 'echo SLEE\"\"PING; exec sleep 1000'\n")
        self.read_until(tid, r"\r\nSLEEPING\r\n")
        self.type(tid, "\x03")
        seen, _ = self.read_until(tid, r"mv\$ ")
        self.assertIn("^C", seen)
        _, m = self.cmd(tid, "echo st=$?", r"st=(\d+)\r\n")
        self.assertEqual(m.group(1), "130")

        # An exec beside the terminal: it runs in the same VM meanwhile (a channel port of its
        # own), with its own output and exit code, and the shell goes on.
        other = cc.Client(self.d.sock, timeout=120)
        events, resp = self.exec(sid, ["sh", "-c", "echo beside; exit 3"], other)
        other.close()
        self.assertEqual((self.output(events), resp.get("result", {}).get("exitCode")),
                         ("beside\n", 3), (events, resp))
        self.cmd(tid, "echo al''ive", r"\r\nalive\r\n")

        self.type(tid, "exit 5\n")
        resp = self.finish(tid)
        self.assertEqual(resp.get("result", {}).get("exitCode"), 5, resp)
        self.assertEqual(resp["result"]["backend"], "microvm", resp)

    def hangup(self, sid):
        """terminal.close while the guest shell waits for a sleep: the shell's SIGHUP ends it,
        the foreground sleep goes with it, and the VM serves the next exec. Backend native: in
        a microvm session that is its VM too."""
        tid = self.shell(sid, 24, 80, backend="native")
        self.type(tid, "sh -c 'echo SLEE\"\"PING; exec sleep 1000'\n")
        self.read_until(tid, r"\r\nSLEEPING\r\n")
        self.control("terminal.close", {"terminalId": tid})
        resp = self.finish(tid)
        self.assertEqual(resp.get("result", {}).get("exitCode"), 129, resp)
        events, resp = self.exec(sid, ["sh", "-c", "cat /proc/[0-9]*/cmdline | tr '\\0' ' '; "
                                       "echo; echo next"])
        self.assertEqual(resp.get("result", {}).get("exitCode"), 0, (events, resp))
        out = self.output(events)
        self.assertTrue(out.endswith("next\n"), out)
        self.assertNotIn("sleep 1000", out)

    def test_terminal(self):
        policy = {"microvm": {"accel": self.accel}}
        h = self.c.call("session.launch", {"workdir": self.ws, "backend": "microvm",
                                           "policy": policy})
        self.assertEqual((h["state"], h["backend"]), ("warm", "microvm"), h)
        sid = h["sessionId"]
        self.interactive(sid)
        events, resp = self.exec(sid, ["echo", "after"])
        self.assertEqual((self.output(events), resp["result"]["exitCode"]), ("after\n", 0))
        self.hangup(sid)
        self.c.call("session.destroy", {"sessionId": sid})
        deadline = time.monotonic() + 10
        while vmm_pids() - self.before and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(vmm_pids() - self.before, set(), "a VMM outlived session.destroy")


def main():
    """As root: the checks as root, then this program again as cordon-test (its own cordond:
    cordond takes connections from its own uid only)."""
    global CORDOND, CORDON
    CORDOND, CORDON = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    cc.CONFIG.update(cordond=CORDOND, cordon=CORDON)
    suite = unittest.TestSuite()
    suite.addTest(MicrovmTerminal("test_terminal"))
    ok = unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful()
    for user in users()[1:]:
        print(f"# as {user}", file=sys.stderr)
        r = subprocess.run(["runuser", "-u", user, "--", "/usr/bin/python3",
                            os.path.abspath(__file__), CORDOND, CORDON], check=False)
        ok = ok and r.returncode == 0
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
