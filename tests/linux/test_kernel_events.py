#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What the kernel-side mechanisms put into the events stream, end to end through `cordon run
--events`, every line validated against docs/events.schema.json (tests/lib/events_validate.py):

  - a refused syscall: exactly one violation per refused call, action syscall, target its name;
    a refusal storm: the limit's individual reports plus one aggregate whose raw.count makes the
    total exact; allowed calls (a thread, a fork) report nothing;
  - limits.memory: killed oom (cgroup) or a failed allocation and no kill (rlimit), as the probe
    says; limits.pids: a fork loop stops at the limit (or the run is refused as root without a
    cgroup); SIGTERM to cordon: killed manual, status 143;
  - allowUnixSockets: the listed socket answers, another is refused with a network-outbound
    violation naming its path.

Usage: test_kernel_events.py CORDON SCHEMA (meson passes both)."""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import events_validate as validate  # noqa: E402

CORDON = None
SCHEMA = None
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}.get(os.uname().machine)

# A command that makes N keyctl calls (each refused: EPERM) and checks the errno.
KEYCTL = """import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
for i in range(int(sys.argv[1])):
    r = libc.syscall(%d, 0, 0, 0, 0, 0)
    assert r == -1 and ctypes.get_errno() == 1, (r, ctypes.get_errno())
""" % (SYS_KEYCTL or 0)


class Run:
    def __init__(self, status, stderr, events):
        self.status = status
        self.stderr = stderr
        self.events = events

    def of(self, kind):
        return [e for e in self.events if e["type"] == kind]


class KernelEvents(unittest.TestCase):
    def setUp(self):
        base = os.environ.get("CORDON_TEST_TMP", "/var/tmp")
        self.tmp = tempfile.mkdtemp(prefix="cordon-kev-", dir=base)
        self.ws = os.path.realpath(os.path.join(self.tmp, "ws"))
        self.home = os.path.join(self.tmp, "home")
        os.mkdir(self.ws)
        os.mkdir(self.home, 0o700)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def env(self):
        return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": self.home}

    def read_events(self, path):
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
        for line in lines:
            self.assertEqual(validate.validate_line(SCHEMA, line), [], f"invalid event {line!r}")
        events = [json.loads(line) for line in lines]
        self.assertEqual(events[0]["type"], "starting")
        self.assertIn(events[-1]["type"], ("exit", "killed", "error"))
        self.assertEqual(sum(e["type"] in ("exit", "killed", "error") for e in events), 1)
        return events

    def run_cordon(self, *args, timeout=60):
        ev = os.path.join(self.tmp, "events.jsonl")
        p = subprocess.run([CORDON, "run", "--events", ev, *args], cwd=self.ws, env=self.env(),
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        return Run(p.returncode, p.stderr.decode(errors="replace"), self.read_events(ev))

    def probe_limits(self):
        p = subprocess.run([CORDON, "probe", "--json"], env=self.env(), capture_output=True,
                           check=True)
        return json.loads(p.stdout)["kernel"]["limits"]

    # ---- refused syscalls ------------------------------------------------------------------

    @unittest.skipUnless(SYS_KEYCTL, "keyctl number unknown here")
    def test_one_refusal_one_violation(self):
        r = self.run_cordon("--", "python3", "-c", KEYCTL, "1")
        self.assertEqual(r.status, 0, r.stderr)
        v = r.of("violation")
        self.assertEqual(len(v), 1, v)
        self.assertEqual(v[0]["action"], "syscall")
        self.assertEqual(v[0]["target"], "keyctl")
        self.assertEqual(v[0]["raw"]["syscall"], "keyctl")
        self.assertIn("kernel keyrings are not namespaced", v[0]["raw"]["rule"])
        self.assertNotIn("count", v[0]["raw"])

    @unittest.skipUnless(SYS_KEYCTL, "keyctl number unknown here")
    def test_storm_is_bounded_and_counted(self):
        r = self.run_cordon("--", "python3", "-c", KEYCTL, "3000")
        self.assertEqual(r.status, 0, r.stderr)
        v = r.of("violation")
        single = [e for e in v if "count" not in e["raw"]]
        agg = [e for e in v if "count" in e["raw"]]
        self.assertEqual(len(single), 8)
        self.assertEqual(len(agg), 1)
        self.assertEqual(agg[0]["target"], "keyctl")
        self.assertEqual(len(single) + agg[0]["raw"]["count"], 3000)
        # The aggregate comes before the terminal event.
        self.assertEqual(r.events[-1]["type"], "exit")

    def test_allowed_calls_report_nothing(self):
        code = "import os, threading\nt = threading.Thread(target=print); t.start(); t.join()\n" \
               "pid = os.fork()\nos._exit(0) if pid == 0 else os.waitpid(pid, 0)\n"
        r = self.run_cordon("--", "python3", "-c", code)
        self.assertEqual(r.status, 0, r.stderr)
        self.assertEqual(r.of("violation"), [])

    # ---- limits -------------------------------------------------------------------------------

    def test_memory_limit(self):
        mech = self.probe_limits()
        r = self.run_cordon("--memory", "64M", "--", "python3", "-c",
                            "b = bytearray(512 << 20)\nprint('allocated')")
        if mech == "cgroup":
            self.assertEqual(r.status, 125, r.stderr)
            self.assertEqual(r.events[-1]["type"], "killed")
            self.assertEqual(r.events[-1]["reason"], "oom")
            self.assertIn("cordon: fatal: KILLED: ", r.stderr)
        else:
            # RLIMIT_AS: the allocation fails inside, nothing is killed.
            self.assertEqual(r.status, 1, r.stderr)
            self.assertIn("MemoryError", r.stderr)
            self.assertEqual(r.events[-1]["type"], "exit")

    def test_pids_limit(self):
        mech = self.probe_limits()
        code = ("import os, time\nn = 0\ntry:\n    for i in range(200):\n"
                "        if os.fork() == 0:\n            time.sleep(5); os._exit(0)\n"
                "        n += 1\nexcept BlockingIOError:\n    pass\nprint(n)\n")
        r = self.run_cordon("--pids", "16", "--", "python3", "-c", code)
        if mech == "rlimit" and os.geteuid() == 0:
            self.assertEqual(r.status, 125)
            self.assertEqual(r.events[-1]["type"], "error")
            self.assertEqual(r.events[-1]["code"], "POLICY_UNENFORCEABLE")
            return
        self.assertEqual(r.status, 0, r.stderr)
        self.assertEqual(r.events[-1]["type"], "exit")

    def test_sigterm_is_killed_manual(self):
        ev = os.path.join(self.tmp, "events.jsonl")
        p = subprocess.Popen([CORDON, "run", "--events", ev, "--", "sleep", "30"], cwd=self.ws,
                             env=self.env(), stdin=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        deadline = time.time() + 10
        while time.time() < deadline:
            if os.path.exists(ev):
                with open(ev, encoding="utf-8") as f:
                    if '"ready"' in f.read():
                        break
            time.sleep(0.02)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=10)
        self.assertEqual(p.returncode, 128 + signal.SIGTERM, err)
        events = self.read_events(ev)
        self.assertEqual(events[-1]["type"], "killed")
        self.assertEqual(events[-1]["reason"], "manual")

    # ---- allowUnixSockets -----------------------------------------------------------------------

    def test_unix_sockets(self):
        ok_path = os.path.join(self.tmp, "ok.sock")
        bad_path = os.path.join(self.tmp, "bad.sock")
        hits = {"bad": 0}
        servers = []
        for path, tag in ((ok_path, b"ok"), (bad_path, b"bad")):
            s = socket.socket(socket.AF_UNIX)
            s.bind(path)
            os.chmod(path, 0o666)
            s.listen(8)
            servers.append(s)

            def serve(sock=s, tag=tag):
                while True:
                    try:
                        c, _ = sock.accept()
                    except OSError:
                        return
                    if tag == b"bad":
                        hits["bad"] += 1
                    c.sendall(tag)
                    c.close()
            threading.Thread(target=serve, daemon=True).start()
        policy = os.path.join(self.tmp, "policy.json")
        with open(policy, "w", encoding="utf-8") as f:
            json.dump({"allowUnixSockets": [ok_path]}, f)
        code = ("import socket, sys\nfor p in sys.argv[1:]:\n    s = socket.socket(socket.AF_UNIX)\n"
                "    try:\n        s.connect(p); print(p, s.recv(8).decode())\n"
                "    except OSError as e:\n        print(p, e.errno)\n")
        r = self.run_cordon("--policy", policy, "--", "python3", "-c", code, ok_path, bad_path)
        for s in servers:
            s.close()
        self.assertEqual(r.status, 0, r.stderr)
        self.assertEqual(hits["bad"], 0)
        v = r.of("violation")
        self.assertEqual(len(v), 1, v)
        self.assertEqual(v[0]["action"], "network-outbound")
        self.assertEqual(v[0]["target"], bad_path)
        self.assertEqual(v[0]["raw"]["syscall"], "connect")


class StdioSockets(unittest.TestCase):
    """An unconnected or datagram AF_UNIX socket on fds 0-2 could be aimed at any socket: refused;
    a connected stream socket (a harness's socketpair) is fine."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cordon-kev-",
                                    dir=os.environ.get("CORDON_TEST_TMP", "/var/tmp"))

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def run_with(self, **fds):
        return subprocess.run([CORDON, "run", "--", "sh", "-c", "echo ok"], cwd=self.tmp,
                              env={"PATH": "/usr/bin:/bin", "HOME": self.tmp},
                              stderr=subprocess.PIPE, timeout=30, **fds)

    def test_connected_pair_works(self):
        a, b = socket.socketpair()
        with a, b:
            r = self.run_with(stdout=a)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(b.recv(16), b"ok\n")

    def test_unconnected_and_datagram_refused(self):
        with socket.socket(socket.AF_UNIX) as u:
            r = self.run_with(stdin=u)
        self.assertEqual(r.returncode, 125)
        self.assertIn(b"cordon: fatal: POLICY_UNENFORCEABLE: fd 0 is an unconnected or datagram",
                      r.stderr)
        d1, d2 = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        with d1, d2:
            r = self.run_with(stdout=d1)
        self.assertEqual(r.returncode, 125)


def main():
    global CORDON, SCHEMA
    if len(sys.argv) < 3:
        print("usage: test_kernel_events.py CORDON SCHEMA", file=sys.stderr)
        return 2
    CORDON = os.path.abspath(sys.argv[1])
    with open(sys.argv[2], encoding="utf-8") as f:
        SCHEMA = json.load(f)
    prog = unittest.main(argv=[sys.argv[0], "-v"], exit=False)
    return 0 if prog.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
