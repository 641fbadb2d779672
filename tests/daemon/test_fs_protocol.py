#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The fs.* methods of cordond over a real daemon socket (docs/protocol.md).

Usage: test_fs_protocol.py BUILD/cordond

Starts cordond (tests/lib/cordond_client.py) on a socket under /var/tmp with HOME set to a fake
home holding secrets, launches sessions on a workspace there and checks every fs.* rule both ways
as a client sees it: the result members, the `violation` event and the POLICY_UNENFORCEABLE error
of a refusal, EXEC_FAILED for a failed operation, USAGE for malformed requests (after which the
daemon keeps serving), a parent directory swapped for a symlink while writes arrive, and 8 MiB
contents both ways."""

import base64
import ctypes
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import unittest

CORDOND = None
LIBC = ctypes.CDLL(None, use_errno=True)
RENAME_EXCHANGE = 2


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import cordond_client as cc  # noqa: E402  (tests/lib/cordond_client.py)


class Client(cc.Client):
    """One connection (tests/lib/cordond_client.py): call() returns (events, response) of one
    request, passing over messages for other ids."""

    def call(self, method, **params):
        rid = self.start(method, params)
        events = []
        while True:
            msg = self.read()
            if msg is None:
                raise EOFError("daemon closed the connection")
            if msg["id"] != rid:
                continue
            if "event" in msg:
                events.append(msg["event"])
                continue
            return events, msg


class FsProtocol(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.T = tempfile.mkdtemp(prefix="cordon-fsp-", dir="/var/tmp")
        cls.home = os.path.join(cls.T, "home")
        os.makedirs(os.path.join(cls.home, ".ssh"))
        with open(os.path.join(cls.home, ".ssh", "id_rsa"), "w") as f:
            f.write("SECRET KEY")
        env = dict(os.environ, HOME=cls.home)
        env.pop("XDG_RUNTIME_DIR", None)
        cls.daemon = cc.Daemon(env=env)
        cls.startup = cls.daemon.startup
        cls.c = Client(cls.daemon.sock)

    @classmethod
    def tearDownClass(cls):
        cls.c.close()
        status = cls.daemon.stop(timeout=30)
        log = cls.daemon.stderr()
        shutil.rmtree(cls.daemon.dir, ignore_errors=True)
        shutil.rmtree(cls.T, ignore_errors=True)
        if status is None:
            raise AssertionError("cordond did not exit on SIGTERM:\n" + log)
        if "Sanitizer" in log or "runtime error" in log:
            raise AssertionError("sanitizer report in cordond's stderr:\n" + log)

    def setUp(self):
        self.ws = tempfile.mkdtemp(prefix="ws-", dir=self.T)
        self.outside = tempfile.mkdtemp(prefix="out-", dir=self.T)
        for d in (".git/hooks", ".vscode", "src"):
            os.makedirs(os.path.join(self.ws, d))
        self.put(".git/config", "[core]\n")
        self.put(".bashrc", "# rc\n")
        self.put("src/a.txt", "hello world\n")
        with open(os.path.join(self.outside, "victim.txt"), "w") as f:
            f.write("untouched")
        _, r = self.c.call("session.launch", workdir=self.ws, backend="none")
        self.assertEqual(r["result"]["state"], "warm", r)
        self.sid = r["result"]["sessionId"]

    def tearDown(self):
        self.c.call("session.destroy", sessionId=self.sid)

    # ---- helpers ----

    def p(self, rel):
        return os.path.join(self.ws, rel)

    def put(self, rel, text):
        with open(self.p(rel), "w") as f:
            f.write(text)

    def get(self, path):
        try:
            with open(path, "rb") as f:
                return f.read()
        except (FileNotFoundError, IsADirectoryError):
            return None

    def ok(self, method, **params):
        events, r = self.c.call(method, sessionId=self.sid, **params)
        self.assertIn("result", r, r)
        self.assertEqual(events, [])
        return r["result"]

    def refused(self, method, path, action, rule_part=None, **params):
        before = self.get(path)
        events, r = self.c.call(method, sessionId=self.sid, path=path, **params)
        self.assertIn("error", r, r)
        self.assertEqual(r["error"]["code"], "POLICY_UNENFORCEABLE", r)
        self.assertEqual(len(events), 1, events)
        ev = events[0]
        self.assertEqual(ev["type"], "violation")
        self.assertEqual(ev["sessionId"], self.sid)
        self.assertEqual(ev["action"], action, ev)
        self.assertEqual(ev["raw"]["syscall"], method)
        self.assertIn("time", ev)
        if rule_part:
            self.assertIn(rule_part, ev["raw"]["rule"], ev)
        self.assertEqual(self.get(path), before)
        return r["error"]["message"]

    def failed(self, method, code="EXEC_FAILED", **params):
        events, r = self.c.call(method, sessionId=self.sid, **params)
        self.assertIn("error", r, r)
        self.assertEqual(r["error"]["code"], code, r)
        self.assertEqual(events, [])
        return r["error"]["message"]

    def write(self, rel, text):
        return self.ok("fs.write", path=self.p(rel), content=text)

    # ---- tests ----

    def test_startup_line(self):
        self.assertTrue(self.startup.startswith(("agent sandbox ON", "no OS-native agent sandbox")),
                        self.startup)

    def test_write_read_roundtrip(self):
        r = self.write("src/new.txt", "caf\u00e9\n")
        self.assertEqual(r, {"path": self.p("src/new.txt"), "size": 6, "created": True})
        self.assertEqual(self.get(self.p("src/new.txt")), "caf\u00e9\n".encode())
        r = self.ok("fs.read", path=self.p("src/new.txt"))
        self.assertEqual(r["content"], "caf\u00e9\n")
        self.assertEqual(r["encoding"], "utf-8")
        self.assertEqual((r["size"], r["offset"], r["eof"]), (6, 0, True))
        # Binary content, NUL bytes included: base64 both ways.
        blob = bytes(range(256))
        r = self.ok("fs.write", path=self.p("src/new.txt"), encoding="base64",
                    content=base64.b64encode(blob).decode())
        self.assertFalse(r["created"])
        self.assertEqual(self.get(self.p("src/new.txt")), blob)
        r = self.ok("fs.read", path=self.p("src/new.txt"))
        self.assertEqual(r["encoding"], "base64")
        self.assertEqual(base64.b64decode(r["content"]), blob)
        r = self.ok("fs.read", path=self.p("src/a.txt"), encoding="base64", offset=6, length=5)
        self.assertEqual(base64.b64decode(r["content"]), b"world")
        self.assertFalse(r["eof"])
        msg = self.failed("fs.read", path=self.p("src/new.txt"), encoding="utf-8")
        self.assertIn("not valid UTF-8", msg)
        # Valid UTF-8 that would grow more than two-fold escaped comes as base64 unless asked.
        ctl = "\x01\x02" * 100
        self.write("src/ctl.txt", ctl)
        r = self.ok("fs.read", path=self.p("src/ctl.txt"))
        self.assertEqual((r["encoding"], base64.b64decode(r["content"])), ("base64", ctl.encode()))
        r = self.ok("fs.read", path=self.p("src/ctl.txt"), encoding="utf-8")
        self.assertEqual((r["encoding"], r["content"]), ("utf-8", ctl))
        self.write("src/cjk.txt", "\u6f22\u5b57" * 100)
        self.assertEqual(self.ok("fs.read", path=self.p("src/cjk.txt"))["encoding"], "utf-8")

    def test_write_refused_outside_roots(self):
        target = os.path.join(self.outside, "new.txt")
        msg = self.refused("fs.write", target, "file-write*", "outside the writable roots",
                           content="x")
        self.assertIn("outside the session's writable roots", msg)
        self.assertIsNone(self.get(target))
        self.refused("fs.write", os.path.join(self.outside, "victim.txt"), "file-write*",
                     content="x")
        self.refused("fs.write", "/etc/cordon-fsp-test", "file-write*", content="x")
        self.refused("fs.write", "/proc/self/comm", "file-write*", "/proc", content="x")

    def test_write_refused_protected(self):
        for rel, rule in ((".git/config", ".git/config"), (".git/hooks/pre-commit", ".git/hooks"),
                          (".bashrc", ".bashrc"), (".vscode/tasks.json", ".vscode"),
                          (".mcp.json", ".mcp.json")):
            self.refused("fs.write", self.p(rel), "file-write*", rule, content="evil")
        self.assertIsNone(self.get(self.p(".git/hooks/pre-commit")))

    def test_write_refused_denied_names(self):
        for rel, rule in ((".env", ".env"), ("src/.env.production", ".env.*"),
                          ("src/server.pem", "*.pem"), ("src/Deploy.KEY", "*.key")):
            self.refused("fs.write", self.p(rel), "file-create-name", rule, content="x")
            self.assertIsNone(self.get(self.p(rel)))
        self.write("src/.envrc", "ok")

    def test_write_refused_other_tools_config(self):
        """data/protected/names.list: files other agents and editors execute or trust."""
        for d in (".cursor", ".github", ".gemini", ".devcontainer"):
            os.makedirs(self.p(d), exist_ok=True)
        for rel, rule in ((".cursor/mcp.json", ".cursor"), (".envrc", ".envrc"),
                          (".aider.conf.yml", ".aider*"), (".gemini/GEMINI.md", ".gemini"),
                          (".github/copilot-instructions.md", ".github/copilot-*"),
                          (".devcontainer/devcontainer.json", ".devcontainer"),
                          ("opencode.json", "opencode.json"), (".cursorrules", ".cursorrules")):
            self.refused("fs.write", self.p(rel), "file-write*", rule, content="evil")
        self.write(".github/CODEOWNERS", "ok")

    def test_write_refused_settings_dirs(self):
        """No fs.* operation writes into a .cordon directory, at any depth: a settings file
        there would choose a later run's sandbox (docs/settings.md)."""
        for d in (".cordon", "sub/.cordon", "deep/a/.CORDON"):
            os.makedirs(self.p(d))
        for rel in (".cordon/settings.json", "sub/.cordon/settings.json",
                    "deep/a/.CORDON/settings.json"):
            self.refused("fs.write", self.p(rel), "file-write*", ".cordon",
                         content='{"sandbox": {"mode": "danger-full-access"}}')
        self.put("sub/.cordon/settings.json", "{}")
        self.refused("fs.edit", self.p("sub/.cordon/settings.json"), "file-write*", ".cordon",
                     oldString="{}", newString='{"sandbox": {"mode": "danger-full-access"}}')
        self.assertEqual(self.get(self.p("sub/.cordon/settings.json")), b"{}")
        # Through a symlink whose target is a .cordon directory.
        os.symlink(self.p("sub/.cordon"), self.p("cfg"))
        self.refused("fs.write", self.p("cfg/settings.json"), "file-write*", content="{}")
        # The daemon's own temporary names (.cordon-XXXX) are not the directory.
        self.write("sub/plain.txt", "ok")

    def trust_file(self, path):
        """What `cordon settings trust` records: the path and the SHA-256 of the content."""
        import hashlib
        with open(path, "rb") as f:
            sha = hashlib.sha256(f.read()).hexdigest()
        store_dir = os.path.join(self.home, ".config", "cordon")
        os.makedirs(store_dir, mode=0o700, exist_ok=True)
        store = os.path.join(store_dir, "trusted-projects.json")
        with open(store, "w") as f:
            json.dump({"trusted": [{"path": path, "sha256": sha}]}, f)
        os.chmod(store, 0o600)
        self.addCleanup(os.unlink, store)

    def session_at(self, workdir):
        _, r = self.c.call("session.launch", workdir=workdir, backend="none")
        self.assertEqual(r["result"]["state"], "warm", r)
        sid = r["result"]["sessionId"]
        self.addCleanup(self.c.call, "session.destroy", sessionId=sid)
        return sid

    def test_session_project_settings_need_trust(self):
        """session.launch with a workdir holding a project file that a command could have left
        there (a writable bind outside the workspace): ignored until trusted, and untrusted again
        when a byte changes."""
        settings = self.p("sub/.cordon/settings.json")
        os.makedirs(os.path.dirname(settings))
        with open(settings, "w") as f:
            json.dump({"sandbox": {"bindMounts": [{"hostPath": self.outside}]}}, f)
        target = os.path.join(self.outside, "planted.txt")
        sid = self.session_at(self.p("sub"))
        events, r = self.c.call("fs.write", sessionId=sid, path=target, content="x")
        self.assertEqual(r["error"]["code"], "POLICY_UNENFORCEABLE", r)
        self.assertIsNone(self.get(target))
        self.trust_file(settings)
        sid = self.session_at(self.p("sub"))
        _, r = self.c.call("fs.write", sessionId=sid, path=target, content="x")
        self.assertIn("result", r, r)
        self.assertEqual(self.get(target), b"x")
        with open(settings, "a") as f:
            f.write(" ")
        sid = self.session_at(self.p("sub"))
        _, r = self.c.call("fs.write", sessionId=sid, path=target, content="y")
        self.assertEqual(r["error"]["code"], "POLICY_UNENFORCEABLE", r)
        self.assertEqual(self.get(target), b"x")

    def test_symlinks(self):
        os.symlink(os.path.join(self.outside, "victim.txt"), self.p("link"))
        self.refused("fs.write", self.p("link"), "file-write*", "symlink", content="x")
        self.assertEqual(self.get(os.path.join(self.outside, "victim.txt")), b"untouched")
        self.assertTrue(os.path.islink(self.p("link")))
        os.symlink(self.outside, self.p("out"))
        self.refused("fs.write", self.p("out/new.txt"), "file-write*", content="x")
        self.assertIsNone(self.get(os.path.join(self.outside, "new.txt")))

    def test_swapped_parent_never_writes_outside(self):
        os.mkdir(self.p("d"))
        os.symlink(self.outside, self.p("dl"))
        stop = threading.Event()
        a, b = self.p("d").encode(), self.p("dl").encode()

        def swap():
            while not stop.is_set():
                LIBC.renameat2(-100, a, -100, b, RENAME_EXCHANGE)
                time.sleep(0.00002)

        th = threading.Thread(target=swap)
        th.start()
        outcomes = {"ok": 0, "refused": 0, "failed": 0}
        try:
            for i in range(400):
                events, r = self.c.call("fs.write", sessionId=self.sid,
                                        path=self.p("d/f%d.txt" % i), content="x")
                if "result" in r:
                    outcomes["ok"] += 1
                elif r["error"]["code"] == "POLICY_UNENFORCEABLE":
                    outcomes["refused"] += 1
                else:
                    outcomes["failed"] += 1
        finally:
            stop.set()
            th.join()
        print("swapped parent over the socket:", outcomes, file=sys.stderr)
        self.assertEqual(sorted(os.listdir(self.outside)), ["victim.txt"])
        self.assertGreater(outcomes["refused"], 0)

    def test_hard_link_to_protected(self):
        os.link(self.p(".git/config"), self.p("innocent.txt"))
        # The plan finds the other name of .git/config and protects it as a path of its own
        # (src/plan/plan-links.c); fs-ops.c's own link-count check stands behind it.
        self.refused("fs.write", self.p("innocent.txt"), "file-write*", "innocent.txt", content="x")
        self.refused("fs.edit", self.p("innocent.txt"), "file-write*", "innocent.txt",
                     oldString="core", newString="evil")
        self.assertEqual(self.get(self.p(".git/config")), b"[core]\n")
        # Any file with other names: fs-ops.c refuses by its link count.
        os.link(self.p("src/a.txt"), self.p("other-name.txt"))
        self.refused("fs.write", self.p("other-name.txt"), "file-write*", "hard link", content="x")

    def test_secrets(self):
        key = os.path.join(self.home, ".ssh", "id_rsa")
        self.refused("fs.read", key, "file-read*", ".ssh")
        self.refused("fs.stat", key, "file-read*", ".ssh")
        self.refused("fs.list", os.path.join(self.home, ".ssh"), "file-read*", ".ssh")
        os.symlink(key, self.p("k"))
        self.refused("fs.read", self.p("k"), "file-read*", ".ssh")
        self.refused("fs.read", "/proc/self/environ", "file-read*", "/proc")
        r = self.ok("fs.list", path=self.home)
        # The home also holds .cache (the session's tool cache root): look .ssh up by name.
        ssh = [e for e in r["entries"] if e["name"] == ".ssh"]
        self.assertEqual(len(ssh), 1)
        self.assertTrue(ssh[0]["secret"])
        self.assertEqual(self.ok("fs.read", path=self.p(".git/config"))["content"], "[core]\n")

    def test_edit(self):
        r = self.ok("fs.edit", path=self.p("src/a.txt"), oldString="world", newString="there")
        self.assertEqual(r, {"path": self.p("src/a.txt"), "size": 12})
        self.assertEqual(self.get(self.p("src/a.txt")), b"hello there\n")
        self.assertIn("does not occur",
                      self.failed("fs.edit", path=self.p("src/a.txt"), oldString="world",
                                  newString="x"))
        self.put("src/b.txt", "x = 1\nx = 1\n")
        self.assertIn("occurs 2 times",
                      self.failed("fs.edit", path=self.p("src/b.txt"), oldString="x = 1",
                                  newString="x = 2"))
        self.assertEqual(self.get(self.p("src/b.txt")), b"x = 1\nx = 1\n")
        self.refused("fs.edit", self.p(".git/config"), "file-write*", oldString="core",
                     newString="x")
        self.assertEqual(sorted(os.listdir(self.p("src"))), ["a.txt", "b.txt"])

    def test_list_and_stat(self):
        os.symlink("a.txt", self.p("src/l"))
        os.chmod(self.p("src/a.txt"), 0o640)
        r = self.ok("fs.list", path=self.p("src"))
        self.assertFalse(r["truncated"])
        got = [(e["name"], e["type"], e["size"]) for e in r["entries"]]
        self.assertEqual(got, [("a.txt", "file", 12), ("l", "symlink", 5)])
        self.assertEqual(r["entries"][0]["mode"], "0640")
        st = self.ok("fs.stat", path=self.p("src/a.txt"))
        self.assertEqual((st["type"], st["size"], st["mode"]), ("file", 12, "0640"))
        self.assertEqual(st["mtimeNs"], os.stat(self.p("src/a.txt")).st_mtime_ns)
        self.assertRegex(st["mtime"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
        self.assertEqual(self.ok("fs.stat", path=self.p("src"))["type"], "directory")
        self.assertIn("No such file", self.failed("fs.stat", path=self.p("nope")))
        self.assertIn("does not exist",
                      self.failed("fs.write", path=self.p("nodir/x"), content="x"))

    def test_malformed_requests(self):
        cases = [
            ({"path": "src/a.txt"}, "absolute"),
            ({"path": self.p("../x")}, "'..'"),
            ({"path": self.p("a"), "content": "x", "mode": 420}, "unknown member"),
            ({"path": self.p("a"), "content": "AAE=\n", "encoding": "base64"}, "not base64"),
            ({"path": self.p("a"), "content": "x", "encoding": "latin1"}, "encoding"),
            ({"path": self.p("a")}, "content"),
            ({"path": self.p("a"), "content": 5}, "content"),
        ]
        for params, part in cases:
            msg = self.failed("fs.write", code="USAGE", **params)
            self.assertIn(part, msg)
        _, r = self.c.call("fs.read", sessionId="s-nonexistent", path="/etc/hostname")
        self.assertEqual(r["error"]["code"], "USAGE")
        self.assertIn("no such session", r["error"]["message"])
        self.assertIn("length", self.failed("fs.read", code="USAGE", path=self.p("a"),
                                            length=8 * 1024 * 1024 + 1))
        _, r = self.c.call("probe")
        self.assertIn("result", r)

    def test_eight_mib_both_ways(self):
        blob = os.urandom(8 * 1024 * 1024)
        r = self.ok("fs.write", path=self.p("big.bin"), encoding="base64",
                    content=base64.b64encode(blob).decode())
        self.assertEqual(r["size"], len(blob))
        r = self.ok("fs.read", path=self.p("big.bin"))
        self.assertEqual(base64.b64decode(r["content"]), blob)
        # One byte more is refused by the parser, and the daemon keeps serving.
        msg = self.failed("fs.write", code="USAGE", path=self.p("big2.bin"), encoding="base64",
                          content=base64.b64encode(blob + b"x").decode())
        self.assertIn("longer than", msg)
        self.assertIsNone(self.get(self.p("big2.bin")))
        self.write("after.txt", "still serving")

    def test_native_session(self):
        """The same rules in a warm confined session (skipped where none can start)."""
        _, r = self.c.call("session.launch", workdir=self.ws, backend="native")
        if r["result"]["state"] != "warm":
            self.skipTest("no native session here: %s" % r["result"]["error"])
        sid = r["result"]["sessionId"]
        try:
            _, r = self.c.call("fs.write", sessionId=sid, path=self.p("n.txt"), content="n")
            self.assertIn("result", r, r)
            events, r = self.c.call("fs.write", sessionId=sid, path=self.p(".env"), content="x")
            self.assertEqual(r["error"]["code"], "POLICY_UNENFORCEABLE")
            self.assertEqual(events[0]["action"], "file-create-name")
            # What fs.write made, the sandboxed command sees: one path namespace.
            events, r = self.c.call("session.exec", sessionId=sid, argv=["cat", self.p("n.txt")])
            out = "".join(e.get("data", "") for e in events if e["type"] == "stdout")
            self.assertEqual(r["result"]["exitCode"], 0, r)
            self.assertEqual(out, "n")
        finally:
            self.c.call("session.destroy", sessionId=sid)


if __name__ == "__main__":
    CORDOND = os.path.abspath(sys.argv.pop(1))
    cc.CONFIG["cordond"] = CORDOND
    unittest.main(verbosity=2)
