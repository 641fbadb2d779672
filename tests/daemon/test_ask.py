#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The egress ask mode over cordond's socket (docs/protocol.md, "session.egressAnswer"): in a
session whose policy says egressMode "ask", a connection to an unlisted destination is an
egress.ask event in the exec's stream; the client answers with session.egressAnswer and the
egress.answer event says what the proxy did: allow-session holds for the session's later execs,
deny refuses, no answer within the ask timeout refuses ("timeout"); bad answers are usage
errors. A server of the test's own on 127.0.0.1; the command reaches it by a name (ask.test)
that no entry lists.

Usage: test_ask.py CORDOND CORDON SCHEMA SOURCE_DIR [unittest args]"""
import http.server
import os
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_daemon as td  # noqa: E402

HITS = []


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (the http.server API)
        HITS.append(self.path)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


SERVER = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
PORT = SERVER.server_address[1]
threading.Thread(target=SERVER.serve_forever, daemon=True).start()
TARGET = "ask.test:%d" % PORT


def curl(redirected=False):
    return ["sh", "-c", "curl -s -o /dev/null --max-time 20 -w '%%{http_code}' %s "
            "http://%s/" % ("--noproxy '*'" if redirected else "", TARGET)]


class AskTest(td.DaemonTest):
    def launch_ask(self, timeout=None):
        policy = {"egressMode": "ask", "hosts": {"ask.test": "127.0.0.1"},
                  "egressAllowlist": ["127.0.0.1:%d" % PORT]}
        if timeout:
            policy["egressAskTimeout"] = timeout
        return self.launch_warm(policy=policy)

    def exec_answering(self, sid, argv, answer):
        """Runs an exec and answers each egress.ask of its stream with `answer` (None: never).
        Returns (events, exec response, egressAnswer responses)."""
        rid = self.c.start("session.exec", {"sessionId": sid, "argv": argv})
        events, answers, resp = [], [], None
        pending = set()
        while resp is None or pending:
            msg = self.c.read()
            self.assertIsNotNone(msg, "the daemon hung up")
            if msg["id"] in pending:
                pending.discard(msg["id"])
                answers.append(msg)
                continue
            self.assertEqual(msg["id"], rid, msg)
            if "event" not in msg:
                resp = msg
                continue
            ev = msg["event"]
            self.assertEqual(td.validate.errors_of(td.SCHEMA, td.SCHEMA, ev), [], ev)
            events.append(ev)
            if ev["type"] == "egress.ask" and answer is not None:
                pending.add(self.c.start("session.egressAnswer",
                                         {"sessionId": sid, "id": ev["id"], "answer": answer}))
        return events, resp, answers

    def kinds(self, events, kind, key):
        return [e[key] for e in events if e["type"] == kind]

    def test_allow_session_holds_for_later_execs(self):
        HITS.clear()
        sid = self.launch_ask()
        events, resp, answers = self.exec_answering(sid, curl(), "allow-session")
        self.assertEqual(self.output(events), "200", events)
        self.assertEqual(self.kinds(events, "egress.ask", "target"), [TARGET])
        self.assertEqual(self.kinds(events, "egress.answer", "answer"), ["allow-session"])
        self.assertTrue(all("result" in a for a in answers), answers)
        # The next exec, through the redirected path: not asked again.
        events, resp, _ = self.exec_answering(sid, curl(redirected=True), None)
        self.assertEqual(self.output(events), "200", events)
        self.assertEqual(self.kinds(events, "egress.ask", "target"), [])
        self.assertEqual(len(HITS), 2)

    def test_deny(self):
        HITS.clear()
        sid = self.launch_ask()
        events, resp, _ = self.exec_answering(sid, curl(), "deny")
        self.assertEqual(self.output(events), "403", events)
        self.assertEqual(self.kinds(events, "egress.answer", "answer"), ["deny"])
        self.assertEqual([e["raw"]["rule"] for e in events if e["type"] == "violation"],
                         ["ask: denied"])
        self.assertEqual(resp["result"]["violations"], 1, resp)
        self.assertEqual(HITS, [])

    def test_no_answer_is_a_timeout(self):
        HITS.clear()
        sid = self.launch_ask(timeout="200ms")
        events, resp, _ = self.exec_answering(sid, curl(), None)
        self.assertEqual(self.output(events), "403", events)
        self.assertEqual(self.kinds(events, "egress.ask", "timeoutMs"), [200])
        self.assertEqual(self.kinds(events, "egress.answer", "answer"), ["timeout"])
        self.assertEqual(HITS, [])
        # An answer for a question that is over changes nothing, and is no error.
        ask_id = self.kinds(events, "egress.ask", "id")[0]
        self.c.call("session.egressAnswer", {"sessionId": sid, "id": ask_id,
                                             "answer": "allow-once"})

    def test_bad_requests(self):
        sid = self.launch_ask()
        for params, message in (
                ({"sessionId": sid, "id": 1, "answer": "yes"}, "params.answer"),
                ({"sessionId": sid, "id": -1, "answer": "deny"}, "params.id"),
                ({"sessionId": sid, "answer": "deny"}, "params.id"),
                ({"sessionId": sid, "id": 1, "answer": "deny", "x": 1}, "x"),
                ({"sessionId": "nope", "id": 1, "answer": "deny"}, "no such session")):
            _, resp = self.c.request("session.egressAnswer", params)
            self.assertError(resp, "USAGE", message)


if __name__ == "__main__":
    rest = td.configure(sys.argv)
    try:
        unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
    finally:
        SERVER.shutdown()
