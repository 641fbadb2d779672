# SPDX-License-Identifier: Apache-2.0
"""cordon_client.Client against a real cordond: the protocol version, socket discovery and the
checks before trusting a socket, every method of docs/protocol.md, the error codes mapped to
their classes, concurrent execs (one connection, several threads), a disconnect mid-exec, the
daemon going away."""
import json
import os
import re
import shutil
import socket
import tempfile
import threading
import time
import unittest

import cordon_client as cc
from tests.harness import BASE, SOURCE, Daemon, marker, procs_with, wait_until


class DaemonCase(unittest.TestCase):
    def setUp(self):
        self.d = Daemon()
        self.assertIsNone(self.d.proc.poll(), f"cordond did not start: {self.d.stderr()}")
        self.c = cc.Client(self.d.sock)

    def tearDown(self):
        self.c.close()
        err = self.d.stderr()
        self.assertEqual(self.d.cleanup(), 0, f"cordond exits 0: {err}")

    def warm(self, **kw):
        h = self.c.launch(workdir=self.d.ws, **kw)
        self.assertEqual(h["state"], "warm", h)
        return h["sessionId"]


class VersionTest(DaemonCase):
    def test_the_daemons_version(self):
        with open(os.path.join(SOURCE, "src/daemon/protocol.h"), encoding="utf-8") as f:
            m = re.search(r"#define PROTO_VERSION (\d+)", f.read())
        self.assertEqual(cc.PROTOCOL_VERSION, int(m.group(1)))
        self.assertEqual(int(cc.__version__.split(".")[0]), cc.PROTOCOL_VERSION)
        with open(os.path.join(os.path.dirname(__file__), "..", "pyproject.toml"),
                  encoding="utf-8") as f:
            self.assertIn(f'version = "{cc.__version__}"', f.read())
        # The daemon's refusal of another version names the one it speaks.
        s = socket.socket(socket.AF_UNIX)
        s.connect(self.d.sock)
        s.sendall(json.dumps({"v": cc.PROTOCOL_VERSION + 1, "id": 5, "method": "probe"})
                  .encode() + b"\n")
        msg = json.loads(s.makefile("rb").readline())
        s.close()
        self.assertEqual(msg["v"], cc.PROTOCOL_VERSION)
        self.assertRegex(msg["error"]["message"], rf"protocol version {cc.PROTOCOL_VERSION}\b")

    def test_another_version_from_the_daemon_fails_closed(self):
        d = tempfile.mkdtemp(prefix="cordon-py-fake-", dir=BASE)
        path = os.path.join(d, "fake.sock")
        srv = socket.socket(socket.AF_UNIX)
        srv.bind(path)
        srv.listen(1)

        def serve():
            conn, _ = srv.accept()
            req = json.loads(conn.makefile("rb").readline())
            conn.sendall(json.dumps({"v": 2, "id": req["id"], "result": {}}).encode() + b"\n")
            time.sleep(0.5)
            conn.close()

        t = threading.Thread(target=serve)
        t.start()
        try:
            c = cc.Client(path)
            with self.assertRaisesRegex(cc.ProtocolError, "protocol version 2") as cm:
                c.probe()
            self.assertEqual(cm.exception.code, "LAUNCH_FAILED")
            with self.assertRaises(cc.ProtocolError):
                c.list()  # not used again
            c.close()
        finally:
            t.join()
            srv.close()
            shutil.rmtree(d, ignore_errors=True)


class DiscoveryTest(unittest.TestCase):
    def test_default_socket_path(self):
        self.assertEqual(cc.default_socket_path({"XDG_RUNTIME_DIR": "/run/user/7"}),
                         "/run/user/7/cordon/cordond.sock")
        base = "/run/user" if os.access("/run/user", os.W_OK) else "/tmp"
        for env in ({}, {"XDG_RUNTIME_DIR": ""}, {"XDG_RUNTIME_DIR": "rel/dir"}):
            self.assertEqual(cc.default_socket_path(env),
                             f"{base}/cordon-{os.getuid()}/cordond.sock", env)

    def test_connect_by_default_path(self):
        rt = tempfile.mkdtemp(prefix="cordon-py-xdg-", dir=BASE)
        d = Daemon(env={"XDG_RUNTIME_DIR": rt}, socket_arg=False,
                   sock=os.path.join(rt, "cordon", "cordond.sock"))
        saved = os.environ.get("XDG_RUNTIME_DIR")
        os.environ["XDG_RUNTIME_DIR"] = rt
        try:
            with cc.Client() as c:
                self.assertIn("backends", c.probe())
        finally:
            if saved is None:
                del os.environ["XDG_RUNTIME_DIR"]
            else:
                os.environ["XDG_RUNTIME_DIR"] = saved
            self.assertEqual(d.cleanup(), 0)
            shutil.rmtree(rt, ignore_errors=True)

    def test_refuses_a_socket_another_user_could_have_planted(self):
        d = Daemon()
        try:
            run = os.path.dirname(d.sock)
            os.chmod(run, 0o755)
            with self.assertRaisesRegex(cc.DaemonConnectionError, "not a private directory"):
                cc.Client(d.sock)
            os.chmod(run, 0o700)
            link = os.path.join(d.dir, "link")
            os.symlink(run, link)
            with self.assertRaisesRegex(cc.DaemonConnectionError, "symlink"):
                cc.Client(os.path.join(link, "cordond.sock"))
            with self.assertRaisesRegex(cc.DaemonConnectionError, "No such file"):
                cc.Client(os.path.join(run, "nothing.sock"))
            with self.assertRaises(cc.DaemonConnectionError):
                cc.Client("relative.sock")
            if os.geteuid() == 0:
                os.chown(run, 65534, 65534)  # a private directory of another uid
                with self.assertRaisesRegex(cc.DaemonConnectionError, "owned by uid 65534"):
                    cc.Client(d.sock)
                os.chown(run, 0, 0)
            with cc.Client(d.sock) as c:
                c.probe()
        finally:
            self.assertEqual(d.cleanup(), 0)

    @unittest.skipUnless(os.geteuid() == 0, "needs root to bind as another uid")
    def test_peer_credentials(self):
        """A socket in a private directory of ours, the file ours, but served by another uid
        (the SO_PEERCRED check, as `cordon` does): refused."""
        d = tempfile.mkdtemp(prefix="cordon-py-peer-", dir=BASE)
        os.chmod(d, 0o755)
        run = os.path.join(d, "run")
        os.mkdir(run, 0o700)
        path = os.path.join(run, "s.sock")
        # Bound by root (the file is ours), listened on by a child of another uid: the peer
        # credentials a client sees are those of whoever called listen().
        srv = socket.socket(socket.AF_UNIX)
        srv.bind(path)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.setgid(65534)
            os.setuid(65534)
            srv.listen(1)
            os.write(w, b"x")
            time.sleep(3)
            os._exit(0)
        try:
            os.read(r, 1)
            with self.assertRaisesRegex(cc.DaemonConnectionError, "served by uid 65534"):
                cc.Client(path)
        finally:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            srv.close()
            shutil.rmtree(d, ignore_errors=True)


class SessionTest(DaemonCase):
    def test_probe(self):
        p = self.c.probe()
        self.assertEqual({b["name"] for b in p["backends"]},
                         {"native", "landlock", "microvm", "none"})
        self.assertIn("kernel", p)

    def test_launch_list_destroy(self):
        h = self.c.launch(workdir=self.d.ws)
        self.assertEqual(h["state"], "warm")
        self.assertRegex(h["sessionId"], r"^s-[0-9a-f]{24}$")
        self.assertEqual(h["details"], {"workdir": self.d.ws, "running": 0})
        self.assertEqual(self.warm(policy={"sessionId": "py-7"}), "py-7")
        self.assertEqual([x["sessionId"] for x in self.c.list()][:2], ["py-7", h["sessionId"]])
        self.assertEqual(self.c.destroy(h["sessionId"])["state"], "destroyed")
        self.assertNotIn(h["sessionId"], [x["sessionId"] for x in self.c.list()])
        with self.assertRaisesRegex(cc.UsageError, "no such session") as cm:
            self.c.destroy(h["sessionId"])
        self.assertEqual(cm.exception.code, "USAGE")

    def test_failed_launch_is_a_handle(self):
        h = self.c.launch(workdir=self.d.ws, policy={"mode": "bogus"})
        self.assertEqual((h["state"], h["error"]["code"]), ("error", "POLICY_INVALID"))
        self.assertIsInstance(cc.error_from_wire(h["error"]), cc.PolicyInvalidError)
        with self.assertRaisesRegex(cc.UsageError, "the session failed to start"):
            self.c.run(h["sessionId"], ["true"])
        self.c.destroy(h["sessionId"])

    def test_exec_streams_events_then_result(self):
        sid = self.warm()
        sub = os.path.join(self.d.ws, "sub")
        os.mkdir(sub)
        ex = self.c.exec(sid, ["sh", "-c", 'echo out; echo err >&2; cat; pwd; echo "$FOO"; '
                               'printf "\\377"; exit 3'],
                         stdin="from stdin \u00e9\n", env={"FOO": "bar baz"}, cwd=sub)
        events = list(ex)
        types = [e["type"] for e in events]
        self.assertEqual(types[:2], ["starting", "ready"])
        self.assertEqual(types[-1], "exit")
        out = b"".join(cc.event_bytes(e) for e in events if e["type"] == "stdout")
        self.assertEqual(out, f"out\nfrom stdin \u00e9\n{sub}\nbar baz\n".encode() + b"\xff")
        self.assertEqual(ex.result, {"exitCode": 3, "backend": "native", "violations": 0,
                                     "warm": True})
        self.assertEqual(ex.wait()["exitCode"], 3, "wait() after the end")
        r = self.c.run(sid, ["sh", "-c", "echo o; echo e >&2; kill -KILL $$"])
        self.assertEqual((r.stdout, r.stderr, r.exit_code, r.warm), ("o\n", "e\n", 137, True))
        self.assertEqual(r.events[-1]["type"], "exit")

    def test_violation_events(self):
        sid = self.warm(policy={"denyCreateNames": ["*.secret"]})
        r = self.c.run(sid, ["sh", "-c", "echo x > a.secret; echo rc=$?"])
        self.assertNotEqual(r.stdout, "rc=0\n")
        self.assertTrue(any(e["type"] == "violation" and e["action"] == "file-create-name"
                            for e in r.events))
        self.assertGreaterEqual(r.violations, 1)

    def test_error_codes(self):
        sid = self.warm()
        with self.assertRaisesRegex(cc.ExecFailedError, "cannot execute") as cm:
            self.c.run(sid, ["/nonexistent/cmd"])
        self.assertEqual(cm.exception.events[-1]["type"], "error")
        self.assertGreater(cm.exception.request_id, 0)
        with self.assertRaises(cc.UsageError) as cm:
            self.c.run("no-such-session", ["true"])
        self.assertEqual(cm.exception.events, [])
        with self.assertRaisesRegex(cc.UsageError, 'unknown member "timeout"'):
            self.c.request("session.exec", {"sessionId": sid, "argv": ["true"], "timeout": 5})
        wider = {"bindMounts": [{"hostPath": self.d.dir, "guestPath": self.d.dir,
                                 "readOnly": False}]}
        with self.assertRaisesRegex(cc.PolicyInvalidError, "escalationApproved"):
            self.c.run(sid, ["true"], policy_override=wider)
        r = self.c.run(sid, ["true"], policy_override=wider, escalation_approved=True)
        self.assertEqual(r.events[0]["type"], "escalation")
        asks = self.warm(policy={"commandPolicy": [{"command": "echo asked", "action": "ask"}]})
        with self.assertRaisesRegex(cc.ExecFailedError, "needs approval for 'echo asked'"):
            self.c.run(asks, ["echo", "asked"])
        self.assertEqual(self.c.run(asks, ["echo", "asked"], command_approved=True).stdout,
                         "asked\n")
        slow = self.warm(policy={"limits": {"timeout": "1s"}})
        with self.assertRaises(cc.CommandTimeoutError) as cm:
            self.c.run(slow, ["sleep", "30"])
        self.assertEqual(cm.exception.code, "TIMEOUT")
        self.assertTrue(any(e["type"] == "killed" and e["reason"] == "timeout"
                            for e in cm.exception.events))
        none = self.c.launch(workdir=self.d.ws, backend="none")["sessionId"]
        with self.assertRaisesRegex(cc.SandboxUnavailableError, "terminals need"):
            self.c.terminal(none, backend="native").wait()
        with self.assertRaises(cc.PolicyUnenforceableError) as cm:
            self.c.fs_write(sid, os.path.join(self.d.ws, ".env"), "A=1")
        self.assertEqual(cm.exception.violation["action"], "file-create-name")
        m = marker()
        victim = self.c.exec(sid, ["sleep", m])
        self.assertTrue(wait_until(lambda: procs_with(m)))
        other = cc.Client(self.d.sock)
        other.destroy(sid)
        other.close()
        with self.assertRaisesRegex(cc.KilledError, "the session was destroyed"):
            victim.wait()

    def test_landlock_backend(self):
        """Cold execs in a landlock session: the same events, errors and refusals."""
        probe = self.c.probe()
        if [b for b in probe["backends"] if b["name"] == "landlock"][0]["status"] == "unusable":
            self.skipTest("landlock is unusable on this host")
        h = self.c.launch(workdir=self.d.ws, backend="landlock",
                          policy={"denyCreateNames": ["*.secret"]})
        self.assertEqual((h["state"], h["backend"]), ("warm", "landlock"), h)
        r = self.c.run(h["sessionId"], ["sh", "-c", "echo hi; echo x > a.secret; echo rc=$?"])
        self.assertEqual((r.backend, r.warm), ("landlock", False))
        self.assertNotIn("warm", r.result, "not a warm sandbox: every exec builds its own")
        self.assertTrue(r.stdout.startswith("hi\n") and r.stdout != "hi\nrc=0\n", r.stdout)
        self.assertTrue(any(e["type"] == "violation" and e["action"] == "file-create-name"
                            for e in r.events))
        self.assertFalse(os.path.exists(os.path.join(self.d.ws, "a.secret")))
        with self.assertRaises(cc.ExecFailedError):
            self.c.run(h["sessionId"], ["/nonexistent/cmd"])
        with self.assertRaisesRegex(cc.UsageError, "only a warm session"):
            self.c.suspend(h["sessionId"])
        with self.assertRaises(cc.PolicyUnenforceableError) as cm:
            self.c.fs_write(h["sessionId"], os.path.join(self.d.ws, "b.secret"), "x")
        self.assertEqual(cm.exception.violation["action"], "file-create-name")
        self.c.destroy(h["sessionId"])

    def test_concurrent_execs(self):
        """Two threads wait on two execs of one connection; A ends only once B's answer is in
        (the order is the test's, not the scheduler's)."""
        sid = self.warm()
        go = os.path.join(self.d.ws, f"go-{os.getpid()}")
        a = self.c.exec(sid, ["sh", "-c", f"while [ ! -e {go} ]; do sleep 0.02; done; echo A"])
        b = self.c.exec(sid, ["sh", "-c", "echo B"])
        results = {}

        def wait(name, ex):
            results[name] = cc.client.collect(ex, iter(ex), 1 << 20)

        ta = threading.Thread(target=wait, args=("A", a))
        ta.start()
        wait("B", b)
        self.assertEqual(results["B"].stdout, "B\n")
        self.assertNotIn("A", results)
        self.assertEqual([h for h in self.c.list() if h["sessionId"] == sid][0]["state"],
                         "active")
        open(go, "w").close()
        ta.join(30)
        self.assertEqual(results["A"].stdout, "A\n")
        many = [self.c.exec(sid, ["sh", "-c", f"echo {i}"]) for i in range(6)]
        outs = [cc.client.collect(ex, iter(ex), 1 << 20).stdout for ex in reversed(many)]
        self.assertEqual(outs, [f"{i}\n" for i in reversed(range(6))])

    def test_egress_answer(self):
        """The ask mode: an exec's egress.ask event answered with egress_answer(); deny refuses
        (a destination on no list, which is never reached: the answer decides first)."""
        sid = self.c.launch(workdir=self.d.ws, policy={"egressMode": "ask"})["sessionId"]
        ex = self.c.exec(sid, ["sh", "-c", "curl -s -o /dev/null --max-time 20 "
                                           "-w '%{http_code}' http://ask.invalid:81/"])
        answers, out = [], ""
        for ev in ex:
            if ev["type"] == "egress.ask":
                self.assertEqual(ev["target"], "ask.invalid:81")
                self.c.egress_answer(sid, ev["id"], "deny")
            elif ev["type"] == "egress.answer":
                answers.append(ev["answer"])
            elif ev["type"] == "stdout":
                out += ev["data"]
        self.assertEqual((answers, out), (["deny"], "403"))
        with self.assertRaisesRegex(cc.UsageError, "params.answer"):
            self.c.egress_answer(sid, 1, "maybe")

    def test_suspend_resume(self):
        sid = self.warm()
        self.assertEqual(self.c.suspend(sid)["state"], "suspended")
        self.assertEqual(self.c.suspend(sid)["state"], "suspended")
        with self.assertRaisesRegex(cc.UsageError, "the session is suspended"):
            self.c.run(sid, ["true"])
        self.assertEqual(self.c.resume(sid)["state"], "warm")
        self.assertEqual(self.c.run(sid, ["echo", "awake"]).stdout, "awake\n")
        none = self.c.launch(workdir=self.d.ws, backend="none")["sessionId"]
        with self.assertRaisesRegex(cc.UsageError, "only a warm session"):
            self.c.suspend(none)

    def test_oversize_request_refused_before_sending(self):
        sid = self.warm()
        with self.assertRaisesRegex(cc.UsageError, "longer than 12 MiB"):
            self.c.fs_write(sid, os.path.join(self.d.ws, "big"), "x" * (13 << 20))
        self.assertIn("backends", self.c.probe())

    def test_disconnect_mid_exec(self):
        sid = self.warm()
        other = cc.Client(self.d.sock)
        m = marker()
        ex = other.exec(sid, ["sh", "-c", f"sleep {m}; echo never"])
        self.assertTrue(wait_until(lambda: procs_with(m)), "the command started")
        got = []

        def waiter():
            try:
                ex.wait()
            except cc.CordonError as e:
                got.append(e)

        t = threading.Thread(target=waiter)
        t.start()
        time.sleep(0.2)  # the waiter is in recv()
        other.close()
        t.join(10)
        self.assertEqual(len(got), 1)
        self.assertIsInstance(got[0], cc.DaemonConnectionError)
        with self.assertRaises(cc.DaemonConnectionError):
            other.probe()
        self.assertTrue(wait_until(lambda: not procs_with(m)), "the daemon killed it")
        self.assertEqual(self.c.run(sid, ["echo", "still"]).stdout, "still\n")


class DaemonGoneTest(unittest.TestCase):
    def test_in_flight_requests_fail(self):
        d = Daemon()
        c = cc.Client(d.sock)
        sid = c.launch(workdir=d.ws)["sessionId"]
        m = marker()
        ex = c.exec(sid, ["sleep", m])
        self.assertTrue(wait_until(lambda: procs_with(m)))
        self.assertEqual(d.stop(), 0)
        with self.assertRaisesRegex(cc.DaemonConnectionError, "closed the connection"):
            ex.wait()
        self.assertTrue(wait_until(lambda: not procs_with(m)), "SIGTERM left nothing running")
        c.close()
        d.cleanup()


if __name__ == "__main__":
    unittest.main()
