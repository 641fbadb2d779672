# SPDX-License-Identifier: Apache-2.0
"""A command on a pseudo-terminal of its own (its controlling terminal), with a prompt answered
each time it appears: how the tests drive `cordon run`'s questions on /dev/tty
(tests/net/test_ask.py: the egress ask mode; tests/cli/test_command_ask.py: command approval)."""
import os
import pty
import select
import signal
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
