#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Which exec a refusal reaches, and in which order, over cordond's socket (docs/protocol.md,
"Order of events" and "Which exec a refusal reaches"): concurrent execs of one warm session each
get only their own processes' refusals, from the creation rules and from the seccomp table;
what a command left running after it ended reaches no other exec; the egress proxy's refusals
reach the exec whose process made the connection; a process that left its exec's session
reaches every running exec (never hidden); a refusal comes before the output the
command writes after it, and before its exit. Each test fails with the delivery the daemon had
before attribution by session id (every running exec got every refusal).

Usage: test_attribution.py CORDOND CORDON SCHEMA SOURCE_DIR [unittest args]"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_daemon as td  # noqa: E402

# A refusal of the seccomp table from a shell: unshare(1) asks for a user namespace, which the
# sandbox's filter refuses and the supervisor reports as action "syscall", target "unshare".
UNSHARE = "unshare -U true 2>/dev/null; echo unshare $?"


class AttributionTest(td.DaemonTest):
    def run_together(self, sid, argvs):
        """Starts one exec per argv on this connection; returns [(events, response)]."""
        ids = [self.c.start("session.exec", {"sessionId": sid, "argv": a}) for a in argvs]
        events = {i: [] for i in ids}
        done = {}
        while len(done) < len(ids):
            msg = self.c.read()
            self.assertIsNotNone(msg, "the daemon hung up")
            self.assertIn(msg["id"], events)
            if "event" in msg:
                events[msg["id"]].append(msg["event"])
            else:
                done[msg["id"]] = msg
        return [(events[i], done[i]) for i in ids]

    def violations(self, events):
        return [e for e in events if e["type"] == "violation"]

    def test_concurrent_execs_get_only_their_own(self):
        sid = self.launch_warm(policy={"denyCreateNames": ["*.secret"]})
        a = "for i in 1 2 3 4 5 6; do touch a$i.secret; sleep 0.15; done; echo A"
        b = "sleep 0.2; touch b1.secret; sleep 0.2; touch b2.secret; sleep 0.5; echo B"
        (ea, ra), (eb, rb) = self.run_together(sid, [["sh", "-c", a], ["sh", "-c", b]])
        ta = sorted(os.path.basename(v["target"]) for v in self.violations(ea))
        tb = sorted(os.path.basename(v["target"]) for v in self.violations(eb))
        self.assertEqual(ta, [f"a{i}.secret" for i in range(1, 7)], ea)
        self.assertEqual(tb, ["b1.secret", "b2.secret"], eb)
        self.assertEqual(ra["result"]["violations"], 6, ra)
        self.assertEqual(rb["result"]["violations"], 2, rb)

    def test_seccomp_refusals_are_attributed(self):
        sid = self.launch_warm()
        probe, _ = self.exec(sid, ["sh", "-c", UNSHARE])
        self.assertNotEqual(self.output(probe), "unshare 0\n", "unshare(CLONE_NEWUSER) ran")
        (ea, ra), (eb, rb) = self.run_together(sid, [
            ["sh", "-c", f"sleep 0.3; {UNSHARE}"], ["sh", "-c", "sleep 1.2; echo quiet"]])
        va = [v for v in self.violations(ea) if v["action"] == "syscall"]
        self.assertTrue(va and va[0]["target"] == "unshare", ea)
        self.assertEqual(self.violations(eb), [], "the quiet exec got another's refusal")
        self.assertEqual(rb["result"]["violations"], 0)

    def test_leftovers_reach_no_later_exec(self):
        sid = self.launch_warm(policy={"denyCreateNames": ["*.secret"]})
        m = self.mark()
        # The first exec ends at once; its background child refuses while the second runs.
        _, resp = self.exec(sid, ["sh", "-c", f"(sleep 0.4; touch left.secret; : {m}) & exit 0"])
        self.assertEqual(resp["result"]["exitCode"], 0)
        events, resp = self.exec(sid, ["sh", "-c", "sleep 1.5; echo late"])
        self.assertEqual(self.output(events), "late\n")
        self.assertEqual(self.violations(events), [], "a leftover's refusal reached this exec")
        self.assertEqual(resp["result"]["violations"], 0)

    def test_a_process_that_leaves_its_session_is_not_hidden(self):
        sid = self.launch_warm(policy={"denyCreateNames": ["*.secret"]})
        m = self.mark()
        # setsid: the process no longer names its exec. Its refusal reaches every running exec.
        esc = f"setsid sh -c 'sleep 0.3; touch esc.secret; : {m}' & sleep 1.2; echo E"
        (ea, _), (eb, _) = self.run_together(sid, [["sh", "-c", esc],
                                                   ["sh", "-c", "sleep 1.2; echo other"]])
        for events in (ea, eb):
            self.assertTrue(any(v["target"].endswith("/esc.secret")
                                for v in self.violations(events)), events)

    def net_targets(self, events):
        return sorted(v["target"] for v in self.violations(events)
                      if v["action"] == "network-outbound")

    def test_proxy_refusals_are_attributed(self):
        """The proxy's refusals, over HTTP and SOCKS5, reach the exec whose process made the
        connection (the supervisor's record of the connect joined with the refused request's
        client address), not every running exec."""
        sid = self.launch_warm()
        # HTTP through the proxy's HTTP port, then SOCKS5 (the proxy resolves: socks5h), both
        # refused (no egressAllowlist); interleaved so that the two execs overlap.
        def curls(who, delay):
            return (f"sleep {delay}; "
                    f"curl -sS -o /dev/null -x \"$HTTP_PROXY\" http://{who}-http.example/; "
                    f"sleep 0.3; "
                    f"curl -sS -o /dev/null -x \"$ALL_PROXY\" http://{who}-socks.example/; "
                    f"sleep 0.6; echo {who}")
        for _ in range(3):
            (ea, ra), (eb, rb) = self.run_together(sid, [["sh", "-c", curls("a", 0)],
                                                          ["sh", "-c", curls("b", 0.15)]])
            self.assertEqual(self.output(ea), "a\n", ea)
            self.assertEqual(self.output(eb), "b\n", eb)
            self.assertEqual(self.net_targets(ea), ["a-http.example:80", "a-socks.example:80"], ea)
            self.assertEqual(self.net_targets(eb), ["b-http.example:80", "b-socks.example:80"], eb)
            self.assertEqual(ra["result"]["violations"], 2, ra)
            self.assertEqual(rb["result"]["violations"], 2, rb)

    def test_redirected_refusals_are_attributed(self):
        """A client that knows nothing of proxies connects to an address outside the loopback;
        the interception redirects it to the proxy, which refuses it: the refusal reaches the
        exec whose process connected (the supervisor records the connect with the redirect's
        port), not every running exec."""
        sid = self.launch_warm()
        def connects(host, delay):
            return (f"sleep {delay}; /usr/bin/python3 -c \"import socket\n"
                    f"try:\n socket.create_connection(('{host}', 81), timeout=5).recv(1)\n"
                    f"except OSError: pass\"; sleep 0.6; echo {host}")
        for _ in range(2):
            (ea, ra), (eb, rb) = self.run_together(sid, [["sh", "-c", connects("192.0.2.1", 0)],
                                                          ["sh", "-c", connects("192.0.2.2", 0.2)]])
            self.assertEqual(self.output(ea), "192.0.2.1\n", ea)
            self.assertEqual(self.output(eb), "192.0.2.2\n", eb)
            self.assertEqual(self.net_targets(ea), ["192.0.2.1:81"], ea)
            self.assertEqual(self.net_targets(eb), ["192.0.2.2:81"], eb)

    def test_resolver_refusals_are_attributed(self):
        """A name the rules do not allow, asked of the sandbox's resolver (glibc connects its
        UDP socket to port 53, which the supervisor records): the NXDOMAIN's violation reaches
        the exec that asked, not every running exec; a later exec that asks for a name an
        earlier one was refused hears of its own refusal too (reported per lookup, not once
        per session)."""
        sid = self.launch_warm()
        def lookups(who, delay):
            return (f"sleep {delay}; getent ahosts {who}-dns.example >/dev/null; echo $?; "
                    f"sleep 0.6; echo {who}")
        for _ in range(2):
            (ea, ra), (eb, rb) = self.run_together(sid, [["sh", "-c", lookups("a", 0)],
                                                          ["sh", "-c", lookups("b", 0.2)]])
            self.assertEqual(self.output(ea), "2\na\n", ea)
            self.assertEqual(self.output(eb), "2\nb\n", eb)
            self.assertEqual(self.dns_targets(ea), ["a-dns.example"], ea)
            self.assertEqual(self.dns_targets(eb), ["b-dns.example"], eb)

    def dns_targets(self, events):
        return sorted(v["target"] for v in self.violations(events)
                      if v.get("raw", {}).get("syscall") == "dns")

    def test_proxy_refusal_of_a_process_that_left_its_session_is_not_hidden(self):
        """A connection made by a process that called setsid() names no exec: its refusal
        reaches every running exec, as the supervisor's own refusals from such a process do."""
        sid = self.launch_warm()
        esc = ("setsid sh -c 'sleep 0.3; curl -sS -o /dev/null -x \"$HTTP_PROXY\" "
               "http://escaped.example/' & sleep 1.5; echo E")
        (ea, _), (eb, _) = self.run_together(sid, [["sh", "-c", esc],
                                                   ["sh", "-c", "sleep 1.5; echo other"]])
        for events in (ea, eb):
            self.assertEqual(self.net_targets(events), ["escaped.example:80"], events)

    def test_one_source_address_on_both_proxy_ports(self):
        """Two live connections may share a source address (SO_REUSEADDR on both) when they go
        to the two proxy ports: the join is by the 4-tuple, so the other exec's connection
        from the same address does not take this exec's refusal."""
        sid = self.launch_warm()
        py = ("import socket, sys, time\n"
              "s = socket.socket()\n"
              "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
              "s.bind(('127.0.0.1', 45678))\n"
              "s.connect(('127.0.0.1', int(sys.argv[1])))\n"
              "time.sleep(float(sys.argv[2]))\n"
              "if sys.argv[1] == '3128':\n"
              "    s.sendall(b'GET http://reuse.example/ HTTP/1.0\\r\\n\\r\\n')\n"
              "    print(s.recv(12).decode())\n"
              "else:\n"
              "    print('held')\n")
        (ea, ra), (eb, rb) = self.run_together(sid, [
            ["/usr/bin/python3", "-c", py, "3128", "1.0"],
            ["sh", "-c", f"sleep 0.3; exec /usr/bin/python3 -c \"$0\" 1080 1.5", py]])
        self.assertEqual(self.output(ea), "HTTP/1.1 403\n", ea)
        self.assertEqual(self.output(eb), "held\n", eb)
        self.assertEqual(self.net_targets(ea), ["reuse.example:80"], ea)
        self.assertEqual(self.net_targets(eb), [], eb)

    def test_no_connection_to_the_proxy_bypasses_connect(self):
        """TCP Fast Open would connect from sendto() without the connect() the supervisor
        records: from a source port another exec's recorded connection used before, its refusal
        would reach that exec. The session's network namespace has it off."""
        sid = self.launch_warm()
        events, _ = self.exec(sid, ["cat", "/proc/sys/net/ipv4/tcp_fastopen"])
        self.assertEqual(self.output(events), "0\n", events)
        # The command cannot turn it back on (no capability; Landlock: /proc is not writable).
        events, _ = self.exec(sid, ["sh", "-c", "echo 1 > /proc/sys/net/ipv4/tcp_fastopen; "
                                    "cat /proc/sys/net/ipv4/tcp_fastopen"])
        self.assertEqual(self.output(events), "0\n", events)
        tfo = ("import errno, socket\n"
               "s = socket.socket()\n"
               "try:\n"
               "    s.sendto(b'GET http://tfo.example/ HTTP/1.0\\r\\n\\r\\n', "
               "socket.MSG_FASTOPEN, ('127.0.0.1', 3128))\n"
               "    print(s.recv(100)[:12])\n"
               "except OSError as e:\n"
               "    print('EOPNOTSUPP' if e.errno == errno.EOPNOTSUPP else e)\n")
        events, resp = self.exec(sid, ["/usr/bin/python3", "-c", tfo])
        self.assertEqual(self.output(events), "EOPNOTSUPP\n", events)
        self.assertEqual(self.net_targets(events), [], events)

    def test_refusal_comes_before_later_output_and_exit(self):
        """The order docs/protocol.md guarantees, checked many times: the refused creation's
        violation event precedes the output written after the call failed."""
        sid = self.launch_warm(policy={"denyCreateNames": ["*.secret"]})
        for i in range(15):
            events, _ = self.exec(sid, ["sh", "-c", f"touch x{i}.secret; echo after"])
            types = [e["type"] for e in events]
            self.assertIn("violation", types, events)
            self.assertLess(types.index("violation"), types.index("stdout"), events)
            self.assertEqual(types[-1], "exit")
        # The same with the command exiting right after the refusal: still delivered.
        for i in range(15):
            events, resp = self.exec(sid, ["sh", "-c", f"exec 2>/dev/null; touch y{i}.secret"])
            self.assertEqual(resp["result"]["violations"], 1, events)


if __name__ == "__main__":
    rest = td.configure(sys.argv)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
