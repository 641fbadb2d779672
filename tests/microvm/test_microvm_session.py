#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Warm microvm sessions through cordond (docs/design/microvm.md "Lifecycle"): one session,
booted once, serves every check below, as root and as cordon-test (cordond run as that user):

- session.launch with backend microvm is warm once the guest is up, and session.list names
  microvm; the guest has limits.cpus vCPUs (`nproc`);
- 20 execs in the one VM, each with its own exit code and stdout, the events naming microvm;
  their mean latency is printed (BENCHMARKS.md "microvm");
- a file one exec writes in the workspace is there for the next (and on the host);
- an exec whose limits.timeout expires is killed (its stream ends "killed", reason "timeout")
  and the VM serves the next exec;
- three execs at once, each waiting for the others to start, their stdout and stderr byte for
  byte and their own exit codes; an exec killed while another streams: the stream goes on
  unbroken, the killed command is gone from the guest; eight at once, a ninth refused
  (LAUNCH_FAILED), the eight unharmed;
- session.suspend stops a guest counter printing every 0.2 s (the whole VM is frozen);
  session.resume lets it go on;
- an exec whose VM side is killed outright (SIGKILL, the channel mid-exec) ends the session:
  that exec and the next fail, nothing of the first reaches the second;
- session.destroy leaves no VMM process;
- limits.cpus on the native backend is refused (POLICY_UNENFORCEABLE), the command not run.

The accelerator is KVM when the probe finds hardware KVM, else TCG (policy microvm.accel).
CORDON_TEST_MUST_WORK=1 makes a host without qemu or the guest kernel a failure.

Usage: test_microvm_session.py CORDOND CORDON"""
import json
import os
import pwd
import shutil
import signal
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
CPUS = 2








class MicrovmSession(unittest.TestCase):
    """The shared session's checks, in order."""

    def setUp(self):
        self.accel = microvm_accel(self, CORDON, MUST_WORK)
        self.before = vmm_pids()
        self.dir = tempfile.mkdtemp(prefix="cordon-mvs-", dir=cc.base_tmp())
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

    def exec(self, sid, argv, **params):
        params.update({"sessionId": sid, "argv": argv})
        return self.c.request("session.exec", params)

    @staticmethod
    def output(events, kind="stdout"):
        return "".join(e["data"] for e in events if e["type"] == kind)

    def exec_vm_side(self):
        """The exec's VM-side process: a fork of the session's init ("cordon-init", not
        executed), below our cordond, whose parent is that init (its own pump's parent is it)."""
        def stat(pid):
            with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
                text = f.read()
            comm = text[text.index("(") + 1:text.rindex(")")]
            return comm, int(text[text.rindex(")") + 2:].split()[1])

        def below_daemon(pid):
            while pid > 1:
                if pid == self.d.proc.pid:
                    return True
                pid = stat(pid)[1]
            return False
        found = []
        for d in os.listdir("/proc"):
            try:
                if not d.isdigit():
                    continue
                comm, ppid = stat(int(d))
                if comm == "cordon-init" and stat(ppid)[0] == "cordon-init" and \
                        stat(stat(ppid)[1])[0] != "cordon-init" and below_daemon(int(d)):
                    found.append(int(d))
            except (OSError, ValueError, IndexError):
                pass
        return found

    def kill_exec_outright(self, sid):
        """An exec whose VM side is SIGKILLed mid-exec (the channel left mid-frame) ends the
        session: its exec fails, the next one cannot read the rest of it."""
        rid = self.c.start("session.exec", {"sessionId": sid, "argv": [
            "sh", "-c", "echo begun; sleep 60"]})
        msg = self.c.read()
        while msg.get("event", {}).get("type") != "stdout":
            msg = self.c.read()
        pids = self.exec_vm_side()
        self.assertEqual(len(pids), 1, pids)
        os.kill(pids[0], signal.SIGKILL)
        _, resp = self.c.collect(rid)
        self.assertIn("error", resp, resp)
        _, resp = self.exec(sid, ["echo", "next"])
        self.assertIn("error", resp, resp)
        self.assertNotIn("begun", json.dumps(resp))

    def collect_all(self, client, rids):
        """Events and response of each request in rids, read from one client as they come."""
        events = {r: [] for r in rids}
        resps = {}
        while len(resps) < len(rids):
            msg = client.read()
            self.assertIsNotNone(msg, "end of file before every response")
            self.assertIn(msg.get("id"), events, msg)
            if "event" in msg:
                events[msg["id"]].append(msg["event"])
            else:
                resps[msg["id"]] = msg
        return events, resps

    def concurrent(self, sid):
        """Three execs at once in the one VM: each waits until all three run (served one after
        the other, the first would wait for ever, until limits.timeout), then writes 400 lines to
        stdout and 400 to stderr; each stream arrives byte for byte, each exit code its own."""
        tags = {"A": 3, "B": 4, "C": 5}
        rids = {}
        for tag, code in tags.items():
            script = (f"touch started-{tag}; for t in A B C; do while [ ! -e started-$t ]; do "
                      f"sleep 0.05; done; done; i=0; while [ $i -lt 400 ]; do echo {tag}$i; "
                      f"echo e{tag}$i >&2; i=$((i+1)); done; exit {code}")
            rids[tag] = self.c.start("session.exec", {"sessionId": sid,
                                                      "argv": ["sh", "-c", script]})
        events, resps = self.collect_all(self.c, list(rids.values()))
        for tag, code in tags.items():
            ev, resp = events[rids[tag]], resps[rids[tag]]
            self.assertEqual(resp.get("result", {}).get("exitCode"), code, (tag, resp))
            self.assertEqual(self.output(ev), "".join(f"{tag}{i}\n" for i in range(400)), tag)
            self.assertEqual(self.output(ev, "stderr"),
                             "".join(f"e{tag}{i}\n" for i in range(400)), tag)

    def kill_beside_stream(self, sid):
        """One exec killed (its client gone: the kill goes into the guest) while another
        streams a counter: the counter goes on unbroken to its end and its own exit code, and no
        `sleep 60` of the killed one is left in the guest."""
        rid = self.c.start("session.exec", {"sessionId": sid, "argv": [
            "sh", "-c", "i=0; while [ ! -e stop ]; do echo s$i; i=$((i+1)); sleep 0.1; done; "
                        "echo end; exit 6"]})
        seen = []

        def read_until(n):
            while len(seen) < n:
                msg = self.c.read()
                self.assertEqual(msg.get("id"), rid, msg)
                self.assertIn("event", msg, msg)
                if msg["event"]["type"] == "stdout":
                    seen.extend(msg["event"]["data"].split())
        read_until(1)
        other = cc.Client(self.d.sock, timeout=120)
        kid = other.start("session.exec", {"sessionId": sid, "argv": [
            "sh", "-c", "echo doomed; exec sleep 60"]})
        msg = other.read()
        while msg.get("event", {}).get("type") != "stdout":
            msg = other.read()
        self.assertEqual((msg["id"], msg["event"]["data"]), (kid, "doomed\n"))
        other.close()  # its exec is killed
        got = len(seen)
        read_until(got + 5)  # the counter goes on past the kill
        with open(os.path.join(self.ws, "stop"), "w", encoding="utf-8"):
            pass
        events, resp = self.c.collect(rid)
        seen.extend(self.output(events).split())
        self.assertEqual(seen[-1], "end", seen)
        self.assertEqual(seen[:-1], [f"s{i}" for i in range(len(seen) - 1)], seen)
        self.assertEqual(resp["result"]["exitCode"], 6, resp)
        events, resp = self.exec(sid, ["sh", "-c", "cat /proc/[0-9]*/cmdline | tr '\\0' ' '; "
                                       "echo; echo next"])
        out = self.output(events)
        self.assertTrue(out.endswith("next\n"), (out, resp))
        self.assertNotIn("sleep 60", out)

    def at_most_eight(self, sid):
        """Eight execs run at once (one channel port each); a ninth while they run is refused
        (LAUNCH_FAILED), not queued; released, the eight end with their own output."""
        rids = {}
        for i in range(8):
            rids[self.c.start("session.exec", {"sessionId": sid, "argv": [
                "sh", "-c", f"echo up; while [ ! -e release ]; do sleep 0.1; done; "
                            f"echo out{i}; exit {i}"]})] = i
        events = {r: [] for r in rids}
        up = set()
        while len(up) < 8:
            msg = self.c.read()
            self.assertIn("event", msg, msg)
            events[msg["id"]].append(msg["event"])
            if msg["event"]["type"] == "stdout":
                up.add(msg["id"])
        other = cc.Client(self.d.sock, timeout=120)
        ev, resp = other.request("session.exec", {"sessionId": sid, "argv": ["echo", "ninth"]})
        other.close()
        self.assertEqual(resp.get("error", {}).get("code"), "LAUNCH_FAILED", (ev, resp))
        self.assertIn("at most 8 execs at once", resp["error"]["message"])
        self.assertNotIn("ninth", json.dumps(ev))
        with open(os.path.join(self.ws, "release"), "w", encoding="utf-8"):
            pass
        rest, resps = self.collect_all(self.c, list(rids))
        for rid, i in rids.items():
            out = self.output(events[rid] + rest[rid])
            self.assertEqual((out, resps[rid]["result"]["exitCode"]), (f"up\nout{i}\n", i))

    def test_session(self):
        policy = {"microvm": {"accel": self.accel}, "limits": {"cpus": CPUS, "timeout": "15s"}}
        t0 = time.monotonic()
        h = self.c.call("session.launch", {"workdir": self.ws, "backend": "microvm",
                                           "policy": policy})
        boot = time.monotonic() - t0
        self.assertEqual((h["state"], h["backend"]), ("warm", "microvm"), h)
        sid = h["sessionId"]
        listed = [x for x in self.c.call("session.list")["sessions"] if x["sessionId"] == sid]
        self.assertEqual(listed[0]["backend"], "microvm")
        self.assertTrue(vmm_pids() - self.before, "no VMM runs for the warm session")

        events, resp = self.exec(sid, ["sh", "-c", "nproc; id -u; test -e /dev/vport0p1 || echo np"])
        uid = os.getuid()
        self.assertEqual(self.output(events), f"{CPUS}\n{uid}\nnp\n", (events, resp))
        ready = [e for e in events if e["type"] == "ready"]
        self.assertEqual(ready[0]["backend"], "microvm", events)
        self.assertEqual(resp["result"]["backend"], "microvm", resp)

        t0 = time.monotonic()
        for i in range(20):
            events, resp = self.exec(sid, ["sh", "-c", f"echo run{i}; exit {i % 7}"])
            self.assertEqual(self.output(events), f"run{i}\n", (i, events, resp))
            self.assertEqual(resp["result"]["exitCode"], i % 7, resp)
        per_exec = (time.monotonic() - t0) / 20
        user = pwd.getpwuid(os.getuid()).pw_name
        print(f"# microvm session ({self.accel}, user {user}): launch and boot "
              f"{boot:.2f} s, {per_exec * 1000:.0f} ms per exec (mean of 20)", file=sys.stderr)
        self.assertLess(per_exec, boot / 2, "an exec is not much faster than a boot")

        _, resp = self.exec(sid, ["sh", "-c", "echo kept > made.txt"])
        self.assertEqual(resp["result"]["exitCode"], 0, resp)
        events, resp = self.exec(sid, ["cat", "made.txt"])
        self.assertEqual(self.output(events), "kept\n", (events, resp))
        with open(os.path.join(self.ws, "made.txt"), encoding="utf-8") as f:
            self.assertEqual(f.read(), "kept\n")

        self.concurrent(sid)
        self.kill_beside_stream(sid)
        self.at_most_eight(sid)

        # limits.timeout (15 s: the counter below must fit in it, frozen time included) kills the exec's command in the guest; the VM stays.
        events, resp = self.exec(sid, ["sh", "-c", "echo started; sleep 60"])
        self.assertEqual(self.output(events), "started\n")
        killed = [e for e in events if e["type"] == "killed"]
        self.assertEqual(killed and killed[0].get("reason"), "timeout", (events, resp))
        events, resp = self.exec(sid, ["echo", "after"])
        self.assertEqual((self.output(events), resp["result"]["exitCode"]), ("after\n", 0))

        # Suspend freezes the VM: a counter every 0.2 s stops, and goes on after resume.
        rid = self.c.start("session.exec", {"sessionId": sid, "argv": [
            "sh", "-c", "i=0; while [ $i -lt 6 ]; do echo $i; i=$((i+1)); sleep 0.2; done"]})
        seen = []

        def read_until(n):
            while len(seen) < n:
                msg = self.c.read()
                self.assertEqual(msg.get("id"), rid, msg)
                self.assertIn("event", msg, msg)
                if msg["event"]["type"] == "stdout":
                    seen.extend(msg["event"]["data"].split())
        read_until(2)
        other = cc.Client(self.d.sock, timeout=120)
        self.assertEqual(other.call("session.suspend", {"sessionId": sid})["state"], "suspended")
        # What the guest had written before the freeze may still arrive; then nothing.
        self.c.sock.settimeout(1.0)
        try:
            while True:
                msg = self.c.read()
                if msg["event"]["type"] == "stdout":
                    seen.extend(msg["event"]["data"].split())
        except TimeoutError:
            pass
        frozen_at = len(seen)
        self.c.sock.settimeout(2.0)
        with self.assertRaises(TimeoutError, msg="output went on while suspended"):
            self.c.read()
        self.c.sock.settimeout(120)
        self.assertEqual(other.call("session.resume", {"sessionId": sid})["state"], "active")
        other.close()
        events, resp = self.c.collect(rid)
        seen.extend(self.output(events).split())
        self.assertGreater(len(seen), frozen_at, "resume did not let the counter go on")
        self.assertEqual(seen, [str(i) for i in range(6)], (seen, events, resp))
        self.assertEqual(resp["result"]["exitCode"], 0, resp)

        self.kill_exec_outright(sid)
        self.c.call("session.destroy", {"sessionId": sid})
        deadline = time.monotonic() + 10
        while vmm_pids() - self.before and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(vmm_pids() - self.before, set(), "a VMM outlived session.destroy")


class CpusElsewhere(unittest.TestCase):
    """limits.cpus on a backend without a VM: refused (nothing would hold the command to it)."""

    def test_native_refuses(self):
        ws = tempfile.mkdtemp(prefix="cordon-mvs-", dir=cc.base_tmp())
        self.addCleanup(shutil.rmtree, ws, True)
        for argv in (["--cpus", "2"], ["--backend", "native", "--cpus", "1"]):
            r = subprocess.run([CORDON, "run"] + argv + ["--", "echo", "ran"],
                               capture_output=True, text=True, cwd=ws, check=False)
            self.assertEqual(r.returncode, 125, r)
            self.assertNotIn("ran", r.stdout)
            self.assertIn("cordon: fatal: POLICY_UNENFORCEABLE: limits.cpus", r.stderr)
        r = subprocess.run([CORDON, "run", "--cpus", "0", "--", "true"], capture_output=True,
                           text=True, cwd=ws, check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--cpus", r.stderr)


def main():
    """As root: the session as root, then this program again as cordon-test (its own cordond:
    cordond takes connections from its own uid only)."""
    global CORDOND, CORDON
    CORDOND, CORDON = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    cc.CONFIG.update(cordond=CORDOND, cordon=CORDON)
    suite = unittest.TestSuite()
    suite.addTest(CpusElsewhere("test_native_refuses"))
    suite.addTest(MicrovmSession("test_session"))
    ok = unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful()
    for user in users()[1:]:
        print(f"# as {user}", file=sys.stderr)
        r = subprocess.run(["runuser", "-u", user, "--", "/usr/bin/python3", os.path.abspath(__file__),
                            CORDOND, CORDON], check=False)
        ok = ok and r.returncode == 0
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
