# SPDX-License-Identifier: Apache-2.0
"""`cordon mcp` on the wire, with what an SDK never sends: malformed lines, batches, an oversized
line, bad envelopes and ids, requests out of order, responses, CRLF, the end of input while a
command runs. Each test drives a server of its own over pipes, one line at a time."""
import json
import os
import subprocess
import tempfile
import time
import unittest

CORDON = os.environ["CORDON"]
BASE = os.environ.get("CORDON_TEST_TMP", "/var/tmp")
LINE_MAX = 24 * 1024 * 1024
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}}


class Server:
    def __init__(self, init=True, sub=None):
        self.dir = tempfile.mkdtemp(prefix="cordon-mcp-proto-", dir=BASE)
        os.mkdir(os.path.join(self.dir, "home"))
        self.ws = self.dir.encode()
        if sub:
            self.ws = os.path.join(self.ws, sub)
            os.mkdir(self.ws)
        env = {"PATH": os.environ["PATH"], "HOME": os.path.join(self.dir, "home"),
               "LANG": "C.UTF-8"}
        self.p = subprocess.Popen([CORDON, "mcp"], cwd=self.ws, env=env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if init:
            assert self.ask(INIT)["result"]["protocolVersion"] == "2025-06-18"
            self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def raw(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def send(self, msg):
        self.raw(json.dumps(msg).encode() + b"\n")

    def read(self):
        line = self.p.stdout.readline()
        assert line.endswith(b"\n"), line
        return json.loads(line)

    def ask(self, msg):
        self.send(msg)
        return self.read()

    def ping(self, i=99):
        """A ping answered proves every line before it was read and handled."""
        r = self.ask({"jsonrpc": "2.0", "id": i, "method": "ping"})
        assert r == {"jsonrpc": "2.0", "id": i, "result": {}}, r

    def close(self):
        self.p.stdin.close()
        rc = self.p.wait(timeout=60)
        rest = self.p.stdout.read()
        self.p.stdout.close()
        self.p.stderr.close()
        subprocess.run(["rm", "-rf", self.dir], check=False)
        return rc, rest


class Protocol(unittest.TestCase):
    def setUp(self):
        self.s = Server()

    def tearDown(self):
        rc, rest = self.s.close()
        self.assertEqual(rc, 0)
        self.assertEqual(rest, b"")

    def error(self, line, code, match, id=None):
        self.s.raw(line if isinstance(line, bytes) else json.dumps(line).encode() + b"\n")
        r = self.s.read()
        self.assertEqual(set(r), {"jsonrpc", "id", "error"}, r)
        self.assertEqual(r["id"], id, r)
        self.assertEqual(r["error"]["code"], code, r)
        self.assertRegex(r["error"]["message"], match)
        return r

    def test_malformed_json(self):
        self.error(b"{not json\n", -32700, "not JSON")
        self.error(b'{"jsonrpc":"2.0","id":1,"method":"ping"\n', -32700, "not JSON")
        self.error(b'{"jsonrpc":"2.0","id":1,"method":"ping"} trailing\n', -32700, "not JSON")
        self.error(b'\xff\xfe{}\n', -32700, "not JSON")
        self.error(b'{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}\n', -32700, "duplicate")
        self.s.ping()

    def test_batch_refused(self):
        self.error(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n', -32600, "batches are not")
        self.error(b"[]\n", -32600, "batches")
        self.s.ping()

    def test_envelope(self):
        self.error(b"42\n", -32600, "JSON object")
        self.error({"jsonrpc": "1.0", "id": 1, "method": "ping"}, -32600, "jsonrpc", id=1)
        self.error({"id": 2, "method": "ping"}, -32600, "jsonrpc", id=2)
        self.error({"jsonrpc": "2.0", "id": None, "method": "ping"}, -32600, "id")
        self.error({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, -32600, "id")
        self.error({"jsonrpc": "2.0", "id": "", "method": "ping"}, -32600, "id")
        self.error({"jsonrpc": "2.0", "id": "x" * 257, "method": "ping"}, -32600, "id")
        self.error({"jsonrpc": "2.0", "id": True, "method": "ping"}, -32600, "id")
        self.error({"jsonrpc": "2.0", "id": 3, "method": 7}, -32600, "method", id=3)
        self.error({"jsonrpc": "2.0", "id": 4, "method": "ping", "params": [1]}, -32600,
                   "params", id=4)
        self.error({"jsonrpc": "2.0", "id": 5, "method": "ping", "extra": 1}, -32600,
                   "unknown member", id=5)
        self.error({"jsonrpc": "2.0", "id": 6, "result": {}, "error": {}}, -32600, "response",
                   id=6)
        self.s.ping("string-id")

    def test_oversized_line_is_skipped(self):
        # One byte over the bound, without a newline until the end: answered once, dropped, and
        # the next line is read as usual.
        self.s.raw(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"x":"' +
                   b"a" * LINE_MAX + b'"}}}\n')
        r = self.s.read()
        self.assertEqual(r["id"], None)
        self.assertEqual(r["error"]["code"], -32600)
        self.assertRegex(r["error"]["message"], "longer than")
        self.s.ping()

    def test_crlf_and_blank_lines(self):
        self.s.raw(b'\n\r\n{"jsonrpc":"2.0","id":7,"method":"ping"}\r\n')
        self.assertEqual(self.s.read(), {"jsonrpc": "2.0", "id": 7, "result": {}})

    def test_methods(self):
        self.error({"jsonrpc": "2.0", "id": 1, "method": "resources/list"}, -32601,
                   "unknown method", id=1)
        self.error({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"x": 1}}, -32602,
                   "unknown member 'x'", id=2)
        self.error(dict(INIT, id=3), -32600, "initialized already", id=3)
        self.error({"jsonrpc": "2.0", "id": 4, "method": "tools/list",
                    "params": {"cursor": "abc"}}, -32602, "cursor", id=4)
        for params, match in ((None, "name"), ({"name": 1}, "name"),
                              ({"name": "shell", "arguments": [1]}, "arguments"),
                              ({"name": "shell", "arguments": {}, "extra": 1}, "unknown member"),
                              ({"name": "shell", "_meta": {"progressToken": 1.5}}, "progressToken"),
                              ({"name": "nope"}, "unknown tool 'nope'")):
            msg = {"jsonrpc": "2.0", "id": 5, "method": "tools/call"}
            if params is not None:
                msg["params"] = params
            self.error(msg, -32602, match, id=5)
        # Notifications and responses are never answered.
        self.s.send({"jsonrpc": "2.0", "method": "notifications/whatever"})
        self.s.send({"jsonrpc": "2.0", "id": 77, "result": {}})
        self.s.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 12345}})
        self.s.ping()

    def test_tools_list_is_stable_json(self):
        r = self.s.ask({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        names = [t["name"] for t in r["result"]["tools"]]
        self.assertEqual(len(names), len(set(names)))
        self.assertIn("shell", names)

    def test_duplicate_id_in_flight(self):
        call = {"jsonrpc": "2.0", "id": "dup", "method": "tools/call",
                "params": {"name": "shell", "arguments": {"command": "exec sleep 4325"}}}
        self.s.send(call)
        self.error(call, -32600, "in use", id="dup")
        self.s.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": "dup"}})
        self.s.ping()  # the cancelled call is not answered: the next line is the ping's


class Lifecycle(unittest.TestCase):
    def test_before_initialize(self):
        s = Server(init=False)
        try:
            s.ping(1)  # allowed before initialize
            r = s.ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
            self.assertEqual(r["error"]["code"], -32002)
            r = s.ask({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {}})
            self.assertEqual(r["error"]["code"], -32602)
            r = s.ask(dict(INIT, params=dict(INIT["params"], protocolVersion="1999-01-01")))
            self.assertEqual(r["result"]["protocolVersion"], "2025-11-25")
            self.assertEqual(r["result"]["capabilities"], {"tools": {"listChanged": False}})
        finally:
            self.assertEqual(s.close()[0], 0)

    def test_directory_not_utf8(self):
        # The server's directory is the host's bytes; every answer must still be JSON text.
        s = Server(sub=b"dir-\xff")
        try:
            r = s.ask({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "write_file",
                                  "arguments": {"path": "a.txt", "content": "x"}}})
            self.assertFalse(r["result"]["isError"], r)
            self.assertTrue(r["result"]["structuredContent"]["path"].endswith("/dir-\ufffd/a.txt"))
            with open(os.path.join(s.ws, b"a.txt"), "rb") as f:
                self.assertEqual(f.read(), b"x")
            r = s.ask({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                       "params": {"name": "shell", "arguments": {"command": "pwd"}}})
            self.assertEqual(r["result"]["structuredContent"]["exitCode"], 0, r)
            self.assertIn("\ufffd", r["result"]["structuredContent"]["stdout"])
        finally:
            self.assertEqual(s.close()[0], 0)

    def test_end_of_input_kills_what_runs(self):
        s = Server()
        s.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "shell", "arguments": {"command": "exec sleep 4324"},
                           "_meta": {"progressToken": 1}}})
        deadline = time.monotonic() + 20
        while not pids("sleep", "4324") and time.monotonic() < deadline:
            time.sleep(0.02)
        self.assertTrue(pids("sleep", "4324"))
        rc, rest = s.close()
        self.assertEqual(rc, 0)
        self.assertEqual(rest, b"")  # a call ended by the end of input is not answered
        self.assertEqual(pids("sleep", "4324"), [])

    def test_killed_server_leaves_nothing(self):
        # SIGKILL (what a client's last resort is): no cleanup of the server's runs, and still
        # nothing outlives it, cold or in a session (docs/design/library.md: the sandbox dies with
        # the thread that forked it).
        s = Server()
        s.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "shell", "arguments": {"command": "exec sleep 4327"}}})
        r = s.ask({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                   "params": {"name": "session_create", "arguments": {}}})
        sid = r["result"]["structuredContent"]["sessionId"]
        s.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "session_exec",
                           "arguments": {"sessionId": sid, "command": "exec sleep 4328"}}})
        deadline = time.monotonic() + 20
        while not (pids("sleep", "4327") and pids("sleep", "4328")) and \
                time.monotonic() < deadline:
            time.sleep(0.02)
        self.assertTrue(pids("sleep", "4327") and pids("sleep", "4328"))
        s.p.kill()
        self.assertEqual(s.p.wait(timeout=60), -9)
        deadline = time.monotonic() + 20
        while (pids("sleep", "4327") or pids("sleep", "4328")) and time.monotonic() < deadline:
            time.sleep(0.02)
        self.assertEqual(pids("sleep", "4327") + pids("sleep", "4328"), [])
        s.close()


def pids(*argv):
    want = b"\0".join(a.encode() for a in argv) + b"\0"
    found = []
    for e in os.listdir("/proc"):
        try:
            with open(f"/proc/{e}/cmdline", "rb") as f:
                if f.read() == want:
                    found.append(int(e))
        except (OSError, ValueError):
            pass
    return found


if __name__ == "__main__":
    unittest.main()
