# SPDX-License-Identifier: Apache-2.0
"""A real cordond for the tests: its socket in a fresh private directory, HOME a fake home with
a secret (~/.ssh/id_rsa), a workspace beside it. Environment: CORDOND (the binary),
CORDON_TEST_TMP (where trees go; default /var/tmp: the sandbox has a private /tmp),
CORDON_SOURCE_DIR (the source tree, for src/daemon/protocol.h and README.md)."""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

CORDOND = os.environ.get("CORDOND", "")
BASE = os.environ.get("CORDON_TEST_TMP", "/var/tmp")
SOURCE = os.environ.get("CORDON_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", "..", ".."))


class Daemon:
    def __init__(self, env=None, socket_arg=True, sock=None):
        if not CORDOND:
            raise RuntimeError("CORDOND is not set")
        self.dir = tempfile.mkdtemp(prefix="cordon-py-client-", dir=BASE)
        os.chmod(self.dir, 0o755)  # the sessions' workspaces live below
        self.home = os.path.join(self.dir, "home")
        os.makedirs(os.path.join(self.home, ".ssh"), mode=0o700)
        with open(os.path.join(self.home, ".ssh", "id_rsa"), "w", encoding="utf-8") as f:
            f.write("PRIVATE KEY\n")
        self.ws = os.path.join(self.dir, "ws")
        os.mkdir(self.ws)
        os.chmod(self.ws, 0o755)
        self.sock = sock or os.path.join(self.dir, "run", "cordond.sock")
        self.errpath = os.path.join(self.dir, "stderr")
        full_env = dict(os.environ, HOME=self.home, **(env or {}))
        argv = [CORDOND] + (["--socket", self.sock] if socket_arg else [])
        with open(self.errpath, "ab") as err:
            self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, env=full_env)
        self.startup = self.proc.stdout.readline().decode("utf-8", "replace").rstrip("\n")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                s = socket.socket(socket.AF_UNIX)
                s.connect(self.sock)
                s.close()
                break
            except OSError:
                time.sleep(0.02)

    def stderr(self):
        with open(self.errpath, encoding="utf-8", errors="replace") as f:
            return f.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        return self.proc.returncode

    def cleanup(self):
        code = self.stop()
        kill_matching(self.sock)
        shutil.rmtree(self.dir, ignore_errors=True)
        return code


def procs_with(text):
    found = []
    needle = text.encode()
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                if needle in f.read():
                    found.append(int(d))
        except OSError:
            pass
    return found


def kill_matching(text):
    for pid in procs_with(text):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def wait_until(cond, timeout=10.0, step=0.05):
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(step)


_markers = [0]


def marker():
    """A `sleep` duration no other process uses: findable in /proc."""
    _markers[0] += 1
    return f"4244.{os.getpid()}{_markers[0]:04d}"
