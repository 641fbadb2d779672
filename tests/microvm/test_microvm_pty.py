#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The microvm backend's terminal (docs/design/microvm.md "Terminals"): `cordon run --backend
microvm` on a terminal gives the guest command a PTY of the guest's own, and the caller's terminal
only passes bytes. Driven through a pty (tests/lib/pty_prompt.py: Terminal) with an interactive
guest shell, one boot as root and one as cordon-test:

- `tty` in the guest names a /dev/pts path, `stty size` the size the caller's terminal had at
  the start, and `/dev/ptmx` is there;
- the caller's terminal is raw while the guest runs (no echo, no canonical mode, no signal
  characters: the guest's line discipline echoes and edits), and has its modes back afterwards;
- a resize of the caller's terminal reaches the guest: a `trap ... WINCH` there prints the new
  size (the guest kernel sent SIGWINCH to its foreground group);
- a line typed reaches a `read` in the guest;
- ^C (the byte 0x03) interrupts a `sleep` in the guest (its status 130) and the run goes on: on
  the host it is a byte, not a SIGINT of cordon (which would end the run);
- the guest shell's exit code is the run's;
- a run killed while the guest runs (the VMM host gets SIGKILL and restores nothing) still
  leaves the terminal's modes as they were: cordon restores them (as root only);
- the caller's terminal hung up while the guest shell waits for input ends the run (the guest
  shell gets SIGHUP), as cordon-test under runuser, where nothing signals cordon itself;
- through the library (mv-tty.c), CORDON_SPAWN_TTY with a PTY the caller opened, as cordond's
  session.terminal does: the guest sees a /dev/pts terminal of the PTY's size, a size set on
  the master reaches a `trap ... WINCH` in the guest, and the run's exit code is the guest's.

The accelerator is KVM when the probe finds hardware KVM, else TCG (`--microvm-accel tcg`).
CORDON_TEST_MUST_WORK=1: qemu and the guest kernel must be present.

Usage: test_microvm_pty.py CORDON MV_TTY"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import termios
import unittest

from mvlib import users  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pty_prompt  # noqa: E402

CORDON = None
MV_TTY = None
MUST_WORK = os.environ.get("CORDON_TEST_MUST_WORK") == "1"
PROMPT = b"G> "  # the guest shell's PS1




def probe_kernel():
    r = subprocess.run([CORDON, "probe", "--json"], capture_output=True, text=True, check=True,
                       cwd="/")
    return json.loads(r.stdout)["kernel"]


class GuestTerminal(unittest.TestCase):
    def setUp(self):
        k = probe_kernel()
        if not k["vmm"] or not k["guestKernel"]:
            if MUST_WORK:
                self.fail("CORDON_TEST_MUST_WORK=1: no VMM or guest kernel")
            self.skipTest("no VMM or guest kernel (scripts/install-deps.sh)")
        self.accel = "kvm" if k["kvmGuestRuns"] and k["kvmKind"] == "hardware" else "tcg"
        self.ws = tempfile.mkdtemp(prefix="cordon-microvm-pty-", dir="/var/tmp")
        os.chmod(self.ws, 0o755)

    def tearDown(self):
        shutil.rmtree(self.ws)

    def workdir(self, user):
        """A directory of its own for one run (HOME and the workspace), owned by `user`."""
        d = tempfile.mkdtemp(dir=self.ws)
        os.chmod(d, 0o755)
        if user:
            shutil.chown(d, user)
        return d

    def shell(self, user):
        d = self.workdir(user)
        who = ["runuser", "-u", user, "--"] if user else []
        # An interactive guest shell with a prompt of its own (PS1 from its parent's export).
        argv = who + ["env", f"HOME={d}", CORDON, "run", "--backend", "microvm",
                      "--microvm-accel", self.accel, "--", "sh", "-c",
                      "export PS1='G> '; exec sh -i"]
        return pty_prompt.Terminal(argv, d, rows=30, cols=100)

    def session(self, user):
        t = self.shell(user)
        try:
            before = t.modes()
            self.assertTrue(before[3] & termios.ECHO and before[3] & termios.ISIG)
            t.expect(PROMPT, timeout=400)
            # Raw while the guest runs: its line discipline does echo, editing and ^C.
            raw = t.modes()
            for flag in (termios.ECHO, termios.ICANON, termios.ISIG):
                self.assertFalse(raw[3] & flag, f"lflag {flag:#o} still set: {raw[3]:#o}")
            self.assertFalse(raw[1] & termios.OPOST)

            t.send(b"tty; stty size; test -c /dev/ptmx && echo PTMX-OK\n")
            got = t.expect(PROMPT)
            self.assertRegex(got, rb"\r\n/dev/pts/[0-9]+\r\n30 100\r\nPTMX-OK\r\n")

            # The trap is set before ARMED is printed; the resize comes after it.
            t.send(b"sh -c 'trap \"stty size; exit 0\" WINCH; echo ARM\"\"ED; "
                   b"while :; do sleep 1; done'\n")
            t.expect(b"ARMED\r\n")
            t.resize(40, 120)
            got = t.expect(PROMPT)
            self.assertIn(b"40 120\r\n", got)

            t.send(b"read x; echo \"got[$x]\"\n")
            t.send(b"typed line\n")
            got = t.expect(PROMPT)
            self.assertIn(b"got[typed line]\r\n", got)

            # SLEEPING is printed by the job itself, in its own process group: the ^C after
            # it reaches the job (sh, or the sleep it became). The guest's line discipline
            # echoes it; the prompt is back long before the sleep could end, and the job's
            # status is SIGINT's (dash, seeing its job end by SIGINT, drops the rest of the
            # line as if it had been interrupted itself: $? is read on the next one).
            t.send(b"sh -c 'echo SLEE\"\"PING; exec sleep 1000'\n")
            t.expect(b"SLEEPING\r\n")
            t.send(b"\x03")
            got = t.expect(PROMPT)
            self.assertIn(b"^C", got)
            t.send(b"echo \"rc=$?\"\n")
            got = t.expect(PROMPT)
            self.assertIn(b"rc=130\r\n", got)

            t.send(b"exit 5\n")
            self.assertEqual(t.end(timeout=120), 5, t.out)
            after = t.modes()
            self.assertEqual(after[:4], before[:4], "the terminal's modes were not restored")
        finally:
            t.close()

    def test_shell_on_a_terminal(self):
        for user in users():
            with self.subTest(user=user or "self"):
                self.session(user)

    def test_killed_run_restores_modes(self):
        """A run whose VMM host is SIGKILLed (here: cordon's SIGTERM, which kills the sandbox;
        --timeout takes the same way) never restores the terminal itself: cordon does."""
        d = self.workdir(None)
        t = pty_prompt.Terminal([CORDON, "run", "--backend", "microvm", "--microvm-accel",
                                 self.accel, "--", "sh", "-c", "echo U\"\"P; exec sleep 1000"],
                                d)
        try:
            before = t.modes()
            t.expect(b"UP\r\n", timeout=400)
            self.assertFalse(t.modes()[3] & termios.ECHO)
            os.kill(t.pid, signal.SIGTERM)
            self.assertEqual(t.end(timeout=120), 143, t.out)
            self.assertEqual(t.modes()[:4], before[:4], "the terminal's modes were not restored")
        finally:
            t.close()

    def test_hangup_ends_the_run(self):
        """The caller's terminal goes away (its emulator quits) while the guest shell waits
        for input: the guest shell gets SIGHUP and the run ends. As cordon-test, under runuser,
        which keeps the kernel's SIGHUP from reaching cordon: only the guest's hangup ends it."""
        user = "cordon-test" if "cordon-test" in users() else None
        t = self.shell(user)
        try:
            t.expect(PROMPT, timeout=400)
            self.assertEqual(t.hang_up(timeout=120), 129)
        finally:
            t.close()

    def spawn_tty(self, user):
        d = self.workdir(user)
        who = ["runuser", "-u", user, "--"] if user else []
        script = ("tty; stty size; trap 'stty size; exit 4' WINCH; echo ARMED; "
                  "while :; do sleep 1; done")
        r = subprocess.run(who + ["env", f"HOME={d}", MV_TTY, self.accel, "sh", "-c", script],
                           capture_output=True, cwd=d, timeout=400)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, rb"^/dev/pts/[0-9]+\r\n24 80\r\nARMED\r\n50 132\r\n"
                                   rb"exit=4\n$")

    def test_spawn_tty(self):
        for user in users():
            with self.subTest(user=user or "self"):
                self.spawn_tty(user)


if __name__ == "__main__":
    CORDON = os.path.abspath(sys.argv.pop(1))
    MV_TTY = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
