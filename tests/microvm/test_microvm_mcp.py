#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`cordon mcp --backend microvm`: session_create boots a warm microvm session (docs/mcp.md),
as root and as cordon-test:

- on a host whose KVM cannot boot the guest, without the opt-in (--microvm-accel tcg)
  session_create is refused naming the opt-in, and no VMM starts;
- with the accelerator the server's policy allows, session_create is warm with a VMM running;
  session_exec runs in the guest (PID 1 is the guest agent, not a native session's cordon-init),
  as the caller's uid, twice in the same VM; session_list names the session; session_destroy
  leaves no VMM process.

CORDON_TEST_MUST_WORK=1 makes a host without qemu or the guest kernel a failure.

Usage: test_microvm_mcp.py CORDON"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

from mvlib import microvm_accel, users, vmm_pids  # noqa: E402

CORDON = None
MUST_WORK = os.environ.get("CORDON_TEST_MUST_WORK") == "1"
BASE = os.environ.get("CORDON_TEST_TMP", "/var/tmp")
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}}


class Server:
    """`cordon mcp ARGS` on pipes, initialized."""

    def __init__(self, ws, args):
        self.p = subprocess.Popen([CORDON, "mcp"] + args, cwd=ws, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.next_id = 1
        assert self.ask(INIT)["result"]["protocolVersion"] == "2025-06-18"
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write(json.dumps(msg).encode() + b"\n")
        self.p.stdin.flush()

    def ask(self, msg):
        self.send(msg)
        line = self.p.stdout.readline()
        assert line.endswith(b"\n"), (line, self.p.stderr.read())
        return json.loads(line)

    def tool(self, name, **arguments):
        self.next_id += 1
        r = self.ask({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                      "params": {"name": name, "arguments": arguments}})
        return r["result"]

    def close(self):
        self.p.stdin.close()
        rc = self.p.wait(timeout=60)
        err = self.p.stderr.read().decode(errors="replace")
        self.p.stdout.close()
        self.p.stderr.close()
        return rc, err


class McpMicrovmSession(unittest.TestCase):
    def setUp(self):
        self.accel = microvm_accel(self, CORDON, MUST_WORK)
        self.before = vmm_pids()
        self.ws = tempfile.mkdtemp(prefix="cordon-mvmcp-", dir=BASE)
        os.chmod(self.ws, 0o755)
        self.addCleanup(shutil.rmtree, self.ws, True)

    def no_vmm_left(self):
        deadline = time.monotonic() + 10
        while vmm_pids() - self.before and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(vmm_pids() - self.before, set(), "a VMM outlived its session")

    def test_without_opt_in_refused(self):
        """Only where the opt-in is needed (KVM cannot boot the guest): a host with hardware
        KVM boots without it, as test_session shows."""
        if self.accel != "tcg":
            return
        s = Server(self.ws, ["--backend", "microvm"])
        r = s.tool("session_create")
        self.assertTrue(r.get("isError"), r)
        self.assertIn("--microvm-accel tcg", r["content"][0]["text"])
        self.assertEqual(vmm_pids() - self.before, set(), "a VMM started without the opt-in")
        self.assertEqual(s.close()[0], 0)

    def test_session(self):
        s = Server(self.ws, ["--backend", "microvm", "--microvm-accel", self.accel])
        try:
            r = s.tool("session_create")
            self.assertFalse(r.get("isError"), r)
            sid = r["structuredContent"]["sessionId"]
            self.assertEqual(r["structuredContent"]["state"], "warm", r)
            self.assertTrue(vmm_pids() - self.before, "no VMM runs for the session")
            for i in range(2):
                r = s.tool("session_exec", sessionId=sid,
                           command=f"cat /proc/1/comm; id -u; exit {i + 3}")
                sc = r["structuredContent"]
                self.assertEqual((sc["stdout"], sc["exitCode"]),
                                 (f"init\n{os.getuid()}\n", i + 3), r)
            listed = s.tool("session_list")["structuredContent"]["sessions"]
            self.assertEqual([x["sessionId"] for x in listed], [sid], listed)
            r = s.tool("session_destroy", sessionId=sid)
            self.assertEqual(r["structuredContent"]["state"], "destroyed", r)
            self.no_vmm_left()
        finally:
            rc, err = s.close()
        self.assertEqual(rc, 0, err)
        self.no_vmm_left()


def main():
    """As root, then this program again as cordon-test."""
    global CORDON
    CORDON = os.path.abspath(sys.argv[1])
    suite = unittest.TestSuite()
    suite.addTest(McpMicrovmSession("test_without_opt_in_refused"))
    suite.addTest(McpMicrovmSession("test_session"))
    ok = unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful()
    for user in users()[1:]:
        print(f"# as {user}", file=sys.stderr)
        r = subprocess.run(["runuser", "-u", user, "--", "/usr/bin/python3",
                            os.path.abspath(__file__), CORDON], check=False)
        ok = ok and r.returncode == 0
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
