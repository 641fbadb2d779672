# SPDX-License-Identifier: Apache-2.0
"""A command on a pseudo-terminal of its own (its controlling terminal), with a prompt answered
each time it appears: how the tests drive `cordon run`'s questions on /dev/tty
(tests/net/test_ask.py: the egress ask mode; tests/cli/test_command_ask.py: command approval);
and Terminal, a pty driven step by step (tests/microvm/test_microvm_pty.py: a guest's shell)."""
import fcntl
import os
import pty
import select
import signal
import struct
import termios
import time


def run(argv, cwd, prompt, answers, timeout=30):
    """Runs argv (argv[0] a path) in cwd on a new pty; each time `prompt` (bytes) appears the
    next of `answers` is typed with a newline (None, or none left: nothing is typed). Killed
    after `timeout` seconds. Returns (exit status, terminal output as text, prompts seen)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(cwd)
        os.execv(argv[0], argv)
    out, seen, pending = b"", 0, list(answers)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not r:
            break
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
        while out.count(prompt) > seen:
            seen += 1
            ans = pending.pop(0) if pending else None
            if ans is not None:
                os.write(fd, ans.encode() + b"\n")
    else:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace"), seen


class Terminal:
    """argv (argv[0] a path or a name in PATH) in cwd on a new pty of `rows` x `cols`, driven
    step by step: expect() waits for output, send() types, resize() sets the size as a
    terminal emulator does (on the master: the kernel signals the foreground group), modes()
    reads the terminal's termios, end() waits for the exit status."""

    def __init__(self, argv, cwd, rows=24, cols=80):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.chdir(cwd)
            os.execvp(argv[0], argv)
        self.resize(rows, cols)
        self.out = b""
        self.seen = 0  # output before this offset was matched already

    def resize(self, rows, cols):
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    def modes(self):
        """[iflag, oflag, cflag, lflag, ispeed, ospeed, cc] of the terminal (the master shares
        the slave's)."""
        return termios.tcgetattr(self.fd)

    def send(self, data):
        os.write(self.fd, data)

    def _read(self, deadline):
        r, _, _ = select.select([self.fd], [], [], max(0.0, deadline - time.monotonic()))
        if not r:
            return False
        try:
            chunk = os.read(self.fd, 4096)
        except OSError:  # EIO: every holder of the slave closed it
            chunk = b""
        self.out += chunk
        return bool(chunk)

    def expect(self, pattern, timeout=60):
        """Waits for `pattern` (bytes) in the output after the last match; returns the output
        up to and including it. AssertionError with the output so far on timeout or EOF."""
        deadline = time.monotonic() + timeout
        while True:
            at = self.out.find(pattern, self.seen)
            if at >= 0:
                got = self.out[self.seen:at + len(pattern)]
                self.seen = at + len(pattern)
                return got
            if time.monotonic() >= deadline or not self._read(deadline):
                raise AssertionError(f"{pattern!r} not seen; output: {self.out!r}")

    def end(self, timeout=60):
        """Reads to EOF and returns the exit code (killed after `timeout` seconds)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self._read(deadline):
            pass
        if time.monotonic() >= deadline:
            os.kill(self.pid, signal.SIGKILL)
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        return os.waitstatus_to_exitcode(status)

    def hang_up(self, timeout=60):
        """Closes the master, as a terminal emulator that quits does, and returns the exit
        code once the command ended (killed after `timeout` seconds)."""
        os.close(self.fd)
        self.fd = None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.pid = None
                return os.waitstatus_to_exitcode(status)
            time.sleep(0.1)
        raise AssertionError(f"still running {timeout} s after the hangup")

    def close(self):
        """The master closed; a command still running (a test failed) is killed."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        if self.pid is not None:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            self.pid = None
