# SPDX-License-Identifier: Apache-2.0
"""cordon_client.AsyncClient against a real cordond: the same surface as the sync client, every
method of docs/protocol.md, typed errors, concurrent execs on one connection (asyncio.gather),
a disconnect mid-exec and the daemon going away."""
import asyncio
import os
import unittest

import cordon_client as cc
from tests.harness import Daemon, marker, procs_with


async def until(cond, timeout=10.0):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        v = cond()
        if v or loop.time() >= deadline:
            return v
        await asyncio.sleep(0.05)


class AsyncTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        # The test's own blocking calls (starting and stopping cordond) are not the client's.
        asyncio.get_running_loop().slow_callback_duration = 5.0
        self.d = Daemon()
        self.c = await cc.AsyncClient.connect(self.d.sock)

    async def asyncTearDown(self):
        await self.c.close()
        err = self.d.stderr()
        self.assertEqual(self.d.cleanup(), 0, f"cordond exits 0: {err}")

    async def warm(self, **kw):
        h = await self.c.launch(workdir=self.d.ws, **kw)
        self.assertEqual(h["state"], "warm", h)
        return h["sessionId"]

    async def test_sessions_and_execs(self):
        self.assertIn("kernel", await self.c.probe())
        sid = await self.warm()
        ex = self.c.exec(sid, ["sh", "-c", "echo out; cat; exit 4"], stdin="in\n")
        events = [ev async for ev in ex]
        self.assertEqual([e["type"] for e in events][:2], ["starting", "ready"])
        self.assertEqual("".join(e["data"] for e in events if e["type"] == "stdout"),
                         "out\nin\n")
        self.assertEqual(ex.result["exitCode"], 4)
        r = await self.c.run(sid, ["sh", "-c", "pwd; echo e >&2"], env={"A": "1"})
        self.assertEqual((r.stdout, r.stderr, r.exit_code), (f"{self.d.ws}\n", "e\n", 0))
        self.assertIn(sid, [h["sessionId"] for h in await self.c.list()])
        self.assertEqual((await self.c.suspend(sid))["state"], "suspended")
        with self.assertRaisesRegex(cc.UsageError, "suspended"):
            await self.c.run(sid, ["true"])
        self.assertEqual((await self.c.resume(sid))["state"], "warm")
        self.assertEqual((await self.c.destroy(sid))["state"], "destroyed")
        with self.assertRaisesRegex(cc.UsageError, "no such session"):
            await self.c.destroy(sid)

    async def test_errors(self):
        sid = await self.warm()
        with self.assertRaises(cc.ExecFailedError) as cm:
            await self.c.run(sid, ["/nonexistent/cmd"])
        self.assertEqual(cm.exception.events[-1]["type"], "error")
        with self.assertRaisesRegex(cc.PolicyInvalidError, "escalationApproved"):
            await self.c.run(sid, ["true"], policy_override={"bindMounts": [
                {"hostPath": self.d.dir, "guestPath": self.d.dir, "readOnly": False}]})
        slow = await self.warm(policy={"limits": {"timeout": "1s"}})
        with self.assertRaises(cc.CommandTimeoutError):
            await self.c.run(slow, ["sleep", "30"])
        none = (await self.c.launch(workdir=self.d.ws, backend="none"))["sessionId"]
        with self.assertRaises(cc.SandboxUnavailableError):
            await self.c.terminal(none, backend="native").wait()
        m = marker()
        victim = self.c.exec(sid, ["sleep", m])
        self.assertTrue(await until(lambda: procs_with(m)))
        await self.c.destroy(sid)
        with self.assertRaises(cc.KilledError):
            await victim.wait()
        h = await self.c.launch(workdir=self.d.ws, policy={"mode": "bogus"})
        self.assertIsInstance(cc.error_from_wire(h["error"]), cc.PolicyInvalidError)
        with self.assertRaisesRegex(cc.UsageError, "longer than 12 MiB"):
            await self.c.fs_write(none, os.path.join(self.d.ws, "big"), "x" * (13 << 20))

    async def test_concurrent_execs(self):
        sid = await self.warm()
        go = os.path.join(self.d.ws, f"go-{os.getpid()}")
        a = asyncio.ensure_future(self.c.run(
            sid, ["sh", "-c", f"while [ ! -e {go} ]; do sleep 0.02; done; echo A"]))
        rest = [self.c.run(sid, ["sh", "-c", f"echo {i}"]) for i in range(6)]
        b = await self.c.run(sid, ["sh", "-c", "echo B"])
        self.assertEqual(b.stdout, "B\n")
        self.assertFalse(a.done(), "A ends only once B's answer is in")
        open(go, "w").close()
        self.assertEqual((await a).stdout, "A\n")
        outs = [r.stdout for r in await asyncio.gather(*rest)]
        self.assertEqual(outs, [f"{i}\n" for i in range(6)])

    async def test_terminal(self):
        sid = await self.warm()
        t = self.c.terminal(sid, backend="native")
        await t.resize(90, 30)
        await t.input("stty size; exit 5\n")
        out = ""
        async for ev in t:
            if ev["type"] == "stdout":
                out += ev["data"]
        self.assertIn("30 90", out)
        self.assertEqual(t.result["exitCode"], 5)
        t2 = self.c.terminal(sid)
        await t2.input("sleep 600\n")
        await t2.close()
        self.assertEqual((await t2.wait())["exitCode"], 137)

    async def test_fs(self):
        sid = await self.warm()
        f = os.path.join(self.d.ws, "a.txt")
        self.assertTrue((await self.c.fs_write(sid, f, "one two"))["created"])
        self.assertEqual((await self.c.fs_read(sid, f))["content"], "one two")
        await self.c.fs_edit(sid, f, "two", "three")
        self.assertEqual(await self.c.read_file(sid, f), b"one three")
        await self.c.fs_write(sid, f, b"\x00\xff")
        self.assertEqual(await self.c.read_file(sid, f), b"\x00\xff")
        self.assertEqual((await self.c.fs_stat(sid, f))["size"], 2)
        self.assertIn("a.txt", [e["name"] for e in (await self.c.fs_list(sid, self.d.ws))["entries"]])
        with self.assertRaises(cc.PolicyUnenforceableError) as cm:
            await self.c.fs_write(sid, os.path.join(self.d.ws, ".env"), "A=1")
        self.assertEqual(cm.exception.violation["action"], "file-create-name")
        with self.assertRaises(cc.ExecFailedError):
            await self.c.fs_stat(sid, os.path.join(self.d.ws, "missing"))

    async def test_disconnect_mid_exec(self):
        sid = await self.warm()
        other = await cc.AsyncClient.connect(self.d.sock)
        m = marker()
        ex = other.exec(sid, ["sleep", m])
        self.assertTrue(await until(lambda: procs_with(m)))
        waiter = asyncio.ensure_future(ex.wait())
        await asyncio.sleep(0.1)
        await other.close()
        with self.assertRaises(cc.DaemonConnectionError):
            await waiter
        with self.assertRaises(cc.DaemonConnectionError):
            await other.probe()
        self.assertTrue(await until(lambda: not procs_with(m)), "the daemon killed it")
        self.assertEqual((await self.c.run(sid, ["echo", "still"])).stdout, "still\n")

    async def test_daemon_gone(self):
        sid = await self.warm()
        m = marker()
        ex = self.c.exec(sid, ["sleep", m])
        self.assertTrue(await until(lambda: procs_with(m)))
        self.assertEqual(self.d.stop(), 0)
        with self.assertRaisesRegex(cc.DaemonConnectionError, "closed the connection"):
            await ex.wait()
        self.assertTrue(await until(lambda: not procs_with(m)))


if __name__ == "__main__":
    unittest.main()
