# SPDX-License-Identifier: Apache-2.0
"""cordon_client.Client against a real cordond: session.terminal with terminal.input,
terminal.resize, terminal.close, and the policy-checked fs.read, fs.write, fs.edit, fs.list,
fs.stat with their refusals (a violation event, then PolicyUnenforceableError) and failures
(ExecFailedError)."""
import os
import time
import unittest

import cordon_client as cc
from tests.harness import marker, procs_with, wait_until
from tests.test_sync import DaemonCase


def read_until(term, text, timeout=10.0):
    """The terminal's output until it contains text; also the events seen."""
    out, events = "", []
    deadline = time.monotonic() + timeout
    while text not in out and time.monotonic() < deadline:
        ev = term.next_event()
        if ev is None:
            break
        events.append(ev)
        if ev["type"] == "stdout":
            out += cc.event_bytes(ev).decode("utf-8", "replace")
    if text not in out:
        raise AssertionError(f"no {text!r} in {out!r}")
    return out, events


class TerminalTest(DaemonCase):
    def test_native_terminal(self):
        sid = self.warm()
        t = self.c.terminal(sid, backend="native", cols=80, rows=24)
        self.assertEqual(t.terminal_id, t.id)
        self.assertEqual(t.resize(101, 33), {})
        self.assertEqual(t.input("stty size; echo x$((6*7)); touch .env; echo rc=$?\n"), {})
        out, events = read_until(t, "rc=1")
        self.assertIn("33 101", out)
        self.assertIn("x42", out)
        self.assertEqual([e for e in events if e["type"] == "ready"][0]["backend"], "native")
        t.input("exit 7\n")
        events += list(t)
        self.assertEqual(t.result["exitCode"], 7)
        # Checked once the terminal has ended: the refusal (reported by the supervisor) and the
        # shell's "rc=1" (its PTY) come on two channels, in no fixed order, both before the end.
        self.assertTrue(any(e["type"] == "violation" and e["target"].endswith("/.env")
                            for e in events), "the creation rule holds in the terminal")
        self.assertFalse(os.path.exists(os.path.join(self.d.ws, ".env")))

    def test_default_terminal_is_the_users_shell(self):
        sid = self.warm()
        t = self.c.terminal(sid)
        t.input("tty; exit 0\n")
        _, events = read_until(t, "/dev/pts/")
        self.assertEqual([e for e in events if e["type"] == "ready"][0]["backend"], "none")
        self.assertEqual(t.wait()["exitCode"], 0)

    def test_close_kills_the_shell(self):
        sid = self.warm()
        m = marker()
        t = self.c.terminal(sid, backend="native")
        t.input(f"sh -c 'sleep 600; : {m}'\n")
        self.assertTrue(wait_until(lambda: procs_with(m)))
        self.assertEqual(t.close(), {})
        self.assertEqual(t.wait()["exitCode"], 137)
        self.assertTrue(wait_until(lambda: not procs_with(m)), "close killed its tree")
        with self.assertRaisesRegex(cc.UsageError, "no such terminal"):
            self.c.request("terminal.input", {"terminalId": t.id, "data": "x"})
        with self.assertRaisesRegex(cc.UsageError, "params.cols"):
            self.c.terminal(sid, cols=1001).wait()


class FsTest(DaemonCase):
    def test_write_read_edit_stat_list(self):
        sid = self.warm()
        f = os.path.join(self.d.ws, "notes.txt")
        w = self.c.fs_write(sid, f, "hello world\n")
        self.assertEqual((w["path"], w["size"], w["created"]), (f, 12, True))
        with open(f, encoding="utf-8") as fh:
            self.assertEqual(fh.read(), "hello world\n")
        self.assertFalse(self.c.fs_write(sid, f, "hello world\n")["created"])
        r = self.c.fs_read(sid, f)
        self.assertEqual((r["content"], r["encoding"], r["size"], r["offset"], r["eof"]),
                         ("hello world\n", "utf-8", 12, 0, True))
        part = self.c.fs_read(sid, f, offset=6, length=5)
        self.assertEqual((part["content"], part["eof"]), ("world", False))
        self.assertEqual(self.c.fs_edit(sid, f, "world", "cordon")["size"], 13)
        with open(f, encoding="utf-8") as fh:
            self.assertEqual(fh.read(), "hello cordon\n")
        b = os.path.join(self.d.ws, "blob.bin")
        data = bytes([0, 1, 2, 0xFF, 0xFE])
        self.assertEqual(self.c.fs_write(sid, b, data)["size"], 5)
        with open(b, "rb") as fh:
            self.assertEqual(fh.read(), data)
        self.assertEqual(self.c.read_file(sid, b), data)
        self.assertEqual(self.c.fs_read(sid, b)["encoding"], "base64")
        st = self.c.fs_stat(sid, f)
        self.assertEqual((st["type"], st["size"], st["mode"]),
                         ("file", 13, f"{os.stat(f).st_mode & 0o777:04o}"))
        self.assertRegex(st["mtime"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
        os.mkdir(os.path.join(self.d.ws, "dir"))
        lst = self.c.fs_list(sid, self.d.ws)
        names = [e["name"] for e in lst["entries"]]
        self.assertEqual(names, sorted(names))
        self.assertTrue({"notes.txt", "blob.bin", "dir"} <= set(names))
        self.assertFalse(lst["truncated"])
        home = self.c.fs_list(sid, self.d.home)["entries"]
        self.assertTrue([e for e in home if e["name"] == ".ssh"][0]["secret"])

    def test_refusals_and_failures(self):
        sid = self.warm()
        with self.assertRaises(cc.PolicyUnenforceableError) as cm:
            self.c.fs_write(sid, os.path.join(self.d.ws, ".env"), "A=1")
        e = cm.exception
        self.assertEqual((e.code, len(e.events)), ("POLICY_UNENFORCEABLE", 1))
        self.assertEqual((e.violation["action"], e.violation["raw"]["syscall"]),
                         ("file-create-name", "fs.write"))
        self.assertFalse(os.path.exists(os.path.join(self.d.ws, ".env")))
        with self.assertRaises(cc.PolicyUnenforceableError) as cm:
            self.c.fs_write(sid, os.path.join(self.d.dir, "outside"), "x")
        self.assertEqual(cm.exception.violation["raw"]["rule"], "outside the writable roots")
        key = os.path.join(self.d.home, ".ssh", "id_rsa")
        with self.assertRaises(cc.PolicyUnenforceableError) as cm:
            self.c.fs_read(sid, key)
        self.assertEqual(cm.exception.violation["action"], "file-read*")
        self.assertNotIn("PRIVATE", repr(cm.exception.events) + str(cm.exception))
        with self.assertRaises(cc.PolicyUnenforceableError):
            self.c.fs_stat(sid, key)
        with self.assertRaisesRegex(cc.ExecFailedError, "No such file or directory"):
            self.c.fs_read(sid, os.path.join(self.d.ws, "missing"))
        f = os.path.join(self.d.ws, "twice.txt")
        self.c.fs_write(sid, f, "a a")
        with self.assertRaisesRegex(cc.ExecFailedError, "occurs 2 times"):
            self.c.fs_edit(sid, f, "a", "b")
        with self.assertRaises(cc.UsageError):
            self.c.fs_read(sid, "relative")
        with self.assertRaises(cc.UsageError):
            self.c.fs_list("no-such-session", self.d.ws)


if __name__ == "__main__":
    unittest.main()
