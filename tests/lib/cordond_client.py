#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A small cordond client and daemon harness for the tests of cordond (docs/protocol.md), standard
library only.

Daemon: starts build/cordond on a socket of its own in a fresh private directory, reads its one
start-up line, keeps its stderr in a file, and stops it (SIGTERM) at the end.
Client: one connection; send() writes one line (an object or raw bytes), read() returns the next
message, request() sends a request and collects its events until its response."""
import json
import os
import signal
import socket
import subprocess
import tempfile
import time

CONFIG = {}  # set by the test programs: cordond, cordon, schema, source


def base_tmp():
    """Where test trees go: /var/tmp (the sandbox has a private /tmp; /root is 0700)."""
    return os.environ.get("CORDON_TEST_TMP", "/var/tmp")


class Daemon:
    """One cordond on a private socket."""

    def __init__(self, args=(), env=None, start=True):
        self.dir = tempfile.mkdtemp(prefix="cordon-daemon-", dir=base_tmp())
        os.chmod(self.dir, 0o755)  # the sandbox's workspaces live below
        self.sockdir = os.path.join(self.dir, "run")  # created by cordond, 0700
        self.sock = os.path.join(self.sockdir, "cordond.sock")
        self.errpath = os.path.join(self.dir, "stderr")
        self.args = list(args)
        self.env = env
        self.proc = None
        self.startup = None
        self.rest_stdout = b""
        if start:
            self.start()

    def start(self, extra_env=None, pass_fds=(), argv=None):
        """Starts the daemon and returns its start-up line (without the newline)."""
        env = dict(self.env if self.env is not None else os.environ)
        env.update(extra_env or {})
        argv = argv or [CONFIG["cordond"], "--socket", self.sock] + self.args
        with open(self.errpath, "ab") as err:
            self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, env=env,
                                         pass_fds=pass_fds)
        self.startup = self.proc.stdout.readline().decode("utf-8", "replace").rstrip("\n")
        self.wait_listening()
        return self.startup

    def wait_listening(self, timeout=10.0):
        """Until the socket accepts (the start-up line comes just before listening)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return
            try:
                s = socket.socket(socket.AF_UNIX)
                s.connect(self.sock)
                s.close()
                return
            except OSError:
                time.sleep(0.02)

    def stderr(self):
        with open(self.errpath, encoding="utf-8", errors="replace") as f:
            return f.read()

    def rss_kib(self, pid=None):
        """VmRSS of the daemon (or pid) in KiB, 0 when gone."""
        try:
            with open(f"/proc/{pid or self.proc.pid}/status", encoding="utf-8") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return 0

    def stop(self, sig=signal.SIGTERM, timeout=20.0):
        """Signals the daemon and waits; returns its exit status (None if it did not exit)."""
        if not self.proc or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None
        finally:
            self.rest_stdout = self.proc.stdout.read()
            self.proc.stdout.close()

    def client(self):
        return Client(self.sock)


class Client:
    """One connection to cordond."""

    def __init__(self, path, timeout=60.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buf = b""
        self.next_id = 1

    def close(self):
        self.sock.close()

    def send(self, obj):
        """One request line: an object (dumped compactly) or raw bytes (sent as they are)."""
        data = obj if isinstance(obj, bytes) else json.dumps(obj, separators=(",", ":")).encode()
        self.sock.sendall(data + (b"" if data.endswith(b"\n") else b"\n"))

    def read_raw(self, limit=64 * 1024 * 1024):
        """The next line as bytes (without '\\n'), or None at end of file."""
        while b"\n" not in self.buf:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                return None
            self.buf += chunk
            if len(self.buf) > limit:
                raise AssertionError("cordond sent a line longer than the test's limit")
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def read(self):
        """The next message as a dict (None at end of file). Every line has "v": 1."""
        line = self.read_raw()
        if line is None:
            return None
        msg = json.loads(line)
        if msg.get("v") != 1:
            raise AssertionError(f"a line without \"v\": 1: {line[:200]!r}")
        return msg

    def start(self, method, params=None, rid=None):
        """Sends a request; returns its id."""
        if rid is None:
            rid = self.next_id
            self.next_id += 1
        req = {"v": 1, "id": rid, "method": method}
        if params is not None:
            req["params"] = params
        self.send(req)
        return rid

    def collect(self, rid):
        """Events and the response of request rid (messages for other ids are an error)."""
        events = []
        while True:
            msg = self.read()
            if msg is None:
                raise AssertionError(f"end of file before the response to {rid}")
            if msg.get("id") != rid:
                raise AssertionError(f"a message for id {msg.get('id')} while waiting for {rid}")
            if "event" in msg:
                events.append(msg["event"])
                continue
            return events, msg

    def request(self, method, params=None):
        """(events, response) of one request."""
        return self.collect(self.start(method, params))

    def call(self, method, params=None):
        """The result of a request that must succeed (no events)."""
        events, msg = self.request(method, params)
        if "result" not in msg:
            raise AssertionError(f"{method} failed: {msg}")
        return msg["result"]


def procs_with(text):
    """Pids of processes whose command line contains `text` (zombies have none)."""
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
    """SIGKILLs what a test left running (processes whose command line holds its marker or its
    daemon's socket path), after the test has looked: a failed test must not leak them."""
    for pid in procs_with(text):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def wait_until(cond, timeout=10.0, step=0.05):
    """Polls cond() until it is true; returns its last value."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(step)


def marker():
    """A sleep duration no other process uses: `sleep MARKER` is findable in /proc."""
    return f"4242.{os.getpid()}{int(time.monotonic() * 1e6) % 10**9:09d}"


def sanitized():
    """Whether the build under test uses -Db_sanitize (slower: smaller floods). run.sh passes
    CORDON_TEST_SANITIZED, as the test user may not read the build tree."""
    if os.environ.get("CORDON_TEST_SANITIZED") in ("0", "1"):
        return os.environ["CORDON_TEST_SANITIZED"] == "1"
    info = os.path.join(os.environ.get("CORDON_BUILD_DIR", ""), "meson-info",
                        "intro-buildoptions.json")
    try:
        with open(info, encoding="utf-8") as f:
            opts = {o["name"]: o["value"] for o in json.load(f)}
    except OSError:
        return False
    return opts.get("b_sanitize", "none") != "none"
