#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The microvm backend (docs/design/microvm.md): the probe's facts (KVM that runs a test guest,
which KVM it is, the VMM, the guest kernel) and its verdict checked against independent
evidence; an explicit `--backend microvm` the host cannot run refused loudly (exit 125, one
`cordon: fatal: SANDBOX_UNAVAILABLE` line, the command not run, no VMM left); and
`cordon run --backend microvm` through the launcher, with the VMM inside the native sandbox:

- one boot as root and one as cordon-test check, through one guest script that prints what it sees: exit status 7,
  stdout and stderr apart, stdin, the events (`starting`/`ready` name the backend, `exit` its
  status), the command's uid, the host's root read-only, a file created in the workspace present
  on the host afterwards, a `.env` there refused (the name rule on qemu's own openat), a write
  outside the writable roots refused, a secret of the sandbox's HOME unreadable, the channel
  port absent from /dev, an allowed loopback server reached through the proxy (slirp's sockets
  are the sandbox's) and a refused one answered 403 by the proxy, the guest's resolv.conf;
- one as cordon-test: its uid and gid in the guest, a workspace file it creates owned by it on
  the host, a SIGTERM of the guest's shell reported as the signal (143);
- cordon_process_signal(SIGTERM) through the library (mv-signal.c) reaches the guest command,
  whose trap runs and whose exit code is the run's;
- `--timeout`, a SIGTERM of cordon (KILLED, 143) and a SIGKILL of cordon (as cordon-test) each
  end the run with no VMM process left.

The accelerator is KVM when the probe finds hardware KVM, else TCG (`--microvm-accel tcg`).
CORDON_TEST_MUST_WORK=1: qemu and the guest kernel must be present (CI installs them with
scripts/install-deps.sh); their absence fails instead of being reported.

Usage: test_microvm.py CORDON MV_SIGNAL"""
import http.server
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from mvlib import VMM, users, vmm_pids  # noqa: E402

CORDON = None
MV_SIGNAL = None
MUST_WORK = os.environ.get("CORDON_TEST_MUST_WORK") == "1"


def as_user(user):
    """The argv prefix that runs a command as `user` (None: as ourselves)."""
    return ["runuser", "-u", user, "--"] if user else []




def probe(user):
    r = subprocess.run(as_user(user) + [CORDON, "probe", "--json"], capture_output=True,
                       text=True, check=True, cwd="/")
    return json.loads(r.stdout)




def hardware_kvm(k):
    return k["kvmGuestRuns"] and k["kvmKind"] == "hardware"


class Probe(unittest.TestCase):
    def check_facts(self, user):
        p = probe(user)
        k = p["kernel"]
        mv = [b for b in p["backends"] if b["name"] == "microvm"][0]
        # A guest ran only on a /dev/kvm this user opened; its kind is the vendor module's.
        self.assertTrue(k["kvm"] or not k["kvmGuestRuns"])
        if not k["kvmGuestRuns"]:
            self.assertEqual(k["kvmKind"], "none")
        elif os.path.isdir("/sys/module/kvm_pvm"):
            self.assertEqual(k["kvmKind"], "pvm")
            self.assertIn("KVM here is PVM (kvm_pvm)", mv["hint"])
        elif os.path.isdir("/sys/module/kvm_intel") or os.path.isdir("/sys/module/kvm_amd"):
            self.assertEqual(k["kvmKind"], "hardware")
        self.assertEqual(k["vmm"], VMM if os.access(VMM, os.X_OK) else None)
        if k["vmm"] is None:
            self.assertIn("no VMM: install Debian's qemu-system-x86", mv["hint"])
            self.assertTrue(mv["requiresInstall"])
        if k["guestKernel"] is None:
            self.assertIn("no guest kernel", mv["hint"])
            self.assertTrue(mv["requiresInstall"])
        else:
            self.assertTrue(os.path.isfile(k["guestKernel"]))
            self.assertTrue(os.path.isdir(os.path.join(k["guestModules"], "kernel")))
        if k["vmm"] is None or k["guestKernel"] is None:
            self.assertEqual(mv["status"], "unusable")
        elif hardware_kvm(k):
            self.assertEqual(mv["status"], "full")
        else:
            self.assertEqual(mv["status"], "partial")
            self.assertTrue(mv["hint"].startswith("software emulation: only with "
                                                  "--microvm-accel tcg"), mv["hint"])
        # Only an explicit request runs it.
        self.assertNotEqual(p["defaultBackend"], "microvm")
        if MUST_WORK:
            self.assertIsNotNone(k["vmm"], "CORDON_TEST_MUST_WORK=1: qemu-system-x86 missing")
            self.assertIsNotNone(k["guestKernel"], "CORDON_TEST_MUST_WORK=1: no guest kernel")
        return mv

    def test_facts(self):
        for user in users():
            with self.subTest(user=user or "self"):
                self.check_facts(user)


class ExplicitRequest(unittest.TestCase):
    def setUp(self):
        if hardware_kvm(probe(None)["kernel"]):
            self.skipTest("hardware KVM: an explicit microvm run is not refused here")

    def refused(self, user):
        ws = tempfile.mkdtemp(prefix="cordon-microvm-")
        try:
            if user:
                shutil.chown(ws, user)
            before = vmm_pids()
            r = subprocess.run(as_user(user) + [CORDON, "run", "--backend", "microvm", "--",
                                                "touch", "ran"],
                               capture_output=True, text=True, cwd=ws, timeout=60)
            self.assertEqual(r.returncode, 125, r.stderr)
            self.assertEqual(r.stdout, "")
            lines = r.stderr.splitlines()
            self.assertEqual(len(lines), 1, r.stderr)
            self.assertTrue(lines[0].startswith(
                "cordon: fatal: SANDBOX_UNAVAILABLE: refusing to run the command unconfined: "
                "the microvm backend "), lines[0])
            k = probe(user)["kernel"]
            if k["vmm"] and k["guestKernel"]:
                # KVM that cannot boot a stock kernel, and no opt-in: TCG is named as the way.
                self.assertIn("cannot use KVM here", lines[0])
                self.assertIn("--microvm-accel tcg", lines[0])
            self.assertFalse(os.path.exists(os.path.join(ws, "ran")), "the command ran")
            self.assertEqual(vmm_pids() - before, set(), "a VMM was left running")
        finally:
            shutil.rmtree(ws)

    def test_refused(self):
        for user in users():
            with self.subTest(user=user or "self"):
                self.refused(user)

    def test_json_result_names_the_request(self):
        """cordon run --json: the report names the backend asked for and the refusal."""
        ws = tempfile.mkdtemp(prefix="cordon-microvm-")
        try:
            out = os.path.join(ws, "result.json")
            r = subprocess.run([CORDON, "run", f"--json={out}", "--backend", "microvm", "--",
                                "true"], capture_output=True, text=True, cwd=ws, timeout=60)
            self.assertEqual(r.returncode, 125, r.stderr)
            with open(out, encoding="utf-8") as f:
                res = json.load(f)
            self.assertEqual(res["requestedBackend"], "microvm")
            self.assertEqual(res["status"], "sandbox-broken")
            self.assertEqual(res["error"]["code"], "SANDBOX_UNAVAILABLE")
        finally:
            shutil.rmtree(ws)

    def test_bad_accel_refused(self):
        r = subprocess.run([CORDON, "run", "--backend", "microvm", "--microvm-accel", "hvf",
                            "--", "true"], capture_output=True, text=True, cwd="/", timeout=60)
        self.assertEqual(r.returncode, 125, r.stderr)
        self.assertTrue(r.stderr.startswith("cordon: fatal: POLICY_INVALID: --microvm-accel: "
                                            "'hvf' is not an accelerator (kvm, tcg)"), r.stderr)


class Server(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        body = b"hello from the host\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


# The guest's network check: an HTTP GET through the proxy the environment names (the guest
# sees it as slirp's gateway); prints "NAME=STATUS" or "NAME=error".
NET_CHECK = ("import sys, urllib.request, urllib.error\n"
             "for name, url in zip(sys.argv[1::2], sys.argv[2::2]):\n"
             "    try:\n"
             "        print(name + '=' + str(urllib.request.urlopen(url, timeout=60).status))\n"
             "    except urllib.error.HTTPError as e:\n"
             "        print(name + '=' + str(e.code))\n"
             "    except Exception as e:\n"
             "        print(name + '=error ' + type(e).__name__)\n")


class Guest(unittest.TestCase):
    """One boot each; skipped (failed under CORDON_TEST_MUST_WORK=1) without VMM or kernel."""

    def setUp(self):
        k = probe(None)["kernel"]
        if not k["vmm"] or not k["guestKernel"]:
            if MUST_WORK:
                self.fail("CORDON_TEST_MUST_WORK=1: no VMM or guest kernel")
            self.skipTest("no VMM or guest kernel (scripts/install-deps.sh)")
        self.accel = "kvm" if hardware_kvm(k) else "tcg"
        # Not under /tmp: the guest's /tmp is the sandbox's private one, which would hide the
        # secret whatever the covering of the secret set does.
        self.home = tempfile.mkdtemp(prefix="cordon-microvm-home-", dir="/var/tmp")
        self.ws = os.path.join(self.home, "ws")
        self.secret = os.path.join(self.home, ".ssh", "id_guest")
        os.makedirs(os.path.join(self.home, ".ssh"))
        os.mkdir(self.ws)
        with open(self.secret, "w", encoding="utf-8") as f:
            f.write("SECRET-KEY\n")
        os.chmod(self.home, 0o755)
        self.before = vmm_pids()

    def tearDown(self):
        shutil.rmtree(self.home)

    def chown(self, user):
        for d, _, files in os.walk(self.home):
            shutil.chown(d, user)
            for n in files:
                shutil.chown(os.path.join(d, n), user)

    def argv(self, user, flags, script):
        return as_user(user) + ["env", f"HOME={self.home}", CORDON, "run", "--backend",
                                "microvm", "--microvm-accel", self.accel] + flags + \
            ["--", "sh", "-c", script]

    def boot(self, user, flags, script, stdin=""):
        if user:
            self.chown(user)
        r = subprocess.run(self.argv(user, flags, script), input=stdin, capture_output=True,
                           text=True, cwd=self.ws, timeout=400)
        self.assertEqual(vmm_pids() - self.before, set(), "a VMM was left running")
        return r

    def no_vmm_within(self, seconds):
        """The VMM's end after a kill is the kernel's (the PID namespace's end): polled."""
        deadline = time.monotonic() + seconds
        while vmm_pids() - self.before and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertEqual(vmm_pids() - self.before, set(), "a VMM was left running")

    def test_boot(self):
        for user in users():
            with self.subTest(user=user or "self"):
                self.check_boot(user)
                self.tearDown()
                self.setUp()

    def check_boot(self, user):
        pw = pwd.getpwnam(user) if user else pwd.getpwuid(os.getuid())
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Server)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        port = srv.server_address[1]
        refused = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Server)
        refused_port = refused.server_address[1]
        events = os.path.join(self.home, "events.jsonl")
        script = ("echo out; echo err >&2; read line; echo \"stdin=$line\"; "
                  "echo \"uid=$(id -u)\"; "
                  "if touch /etc/cordon-guest-write 2>/dev/null; then echo ROOT-WRITABLE; fi; "
                  f"if cat {self.secret} 2>/dev/null; then echo SECRET-READ; fi; "
                  "echo made > made.txt && echo MADE; "
                  "if echo x > .env 2>/dev/null; then echo ENV-CREATED; fi; "
                  "if echo x > ../outside.txt 2>/dev/null; then echo OUTSIDE-WRITTEN; fi; "
                  "for d in /dev/vport0p1 /dev/vda /dev/hvc0; do "
                  "if [ -e $d ]; then echo DEVICE-$d; fi; done; "
                  "grep -q '^nameserver 10.0.2.3$' /etc/resolv.conf && echo RESOLV-SLIRP; "
                  # Names through slirp's resolver, which forwards to the sandbox's: an allowed
                  # one answers, another does not.
                  "echo \"dns-allowed=$(getent hosts example.com | awk '{print $2}')\"; "
                  "echo \"dns-refused=$(getent hosts refused.example.org | awk '{print $2}')\"; "
                  f"python3 -c \"$NET\" allowed http://127.0.0.1:{port}/ "
                  f"refused http://127.0.0.1:{refused_port}/; "
                  "exit 7")
        try:
            r = self.boot(user, [f"--events={events}", "--allow-domain", f"127.0.0.1:{port}",
                                 "--allow-domain", "example.com",
                                 "--env-set", f"NET={NET_CHECK}"], script, stdin="hello\n")
        finally:
            srv.shutdown()
            srv.server_close()
            refused.server_close()
        self.assertEqual(r.returncode, 7, r.stderr)
        self.assertIn("err\n", r.stderr)
        out = r.stdout.splitlines()
        self.assertEqual(out[:4], ["out", "stdin=hello", f"uid={pw.pw_uid}", "MADE"], r.stdout)
        for bad in ("ROOT-WRITABLE", "SECRET-READ", "ENV-CREATED", "OUTSIDE-WRITTEN"):
            self.assertNotIn(bad, out)
        self.assertEqual([o for o in out if o.startswith("DEVICE-")], [])
        self.assertIn("RESOLV-SLIRP", out)
        self.assertIn("allowed=200", out)
        self.assertIn("refused=403", out)
        self.assertIn("dns-allowed=example.com", out)
        self.assertIn("dns-refused=", out)
        with open(os.path.join(self.ws, "made.txt"), encoding="utf-8") as f:
            self.assertEqual(f.read(), "made\n")
        self.assertFalse(os.path.exists(os.path.join(self.ws, ".env")))
        self.assertFalse(os.path.exists(os.path.join(self.home, "outside.txt")))
        self.assertFalse(os.path.exists("/etc/cordon-guest-write"))
        with open(events, encoding="utf-8") as f:
            ev = [json.loads(line) for line in f]
        types = [e["type"] for e in ev]
        self.assertEqual(types[:2], ["starting", "ready"], types)
        self.assertEqual(ev[0]["backend"], "microvm")
        self.assertEqual(ev[1]["backend"], "microvm")
        self.assertEqual(ev[-1]["type"], "exit")
        self.assertEqual(ev[-1]["exitCode"], 7)

    def test_unprivileged_ids_and_signal(self):
        user = "cordon-test" if "cordon-test" in users() else None
        pw = pwd.getpwnam(user) if user else pwd.getpwuid(os.getuid())
        r = self.boot(user, [], "echo \"ids=$(id -u):$(id -g)\"; echo made > made.txt; "
                      "kill -TERM $$; echo after")
        self.assertEqual(r.returncode, 128 + 15, r.stderr)
        self.assertEqual(r.stdout, f"ids={pw.pw_uid}:{pw.pw_gid}\n")
        st = os.stat(os.path.join(self.ws, "made.txt"))
        self.assertEqual((st.st_uid, st.st_gid), (pw.pw_uid, pw.pw_gid))

    def test_timeout_leaves_no_vmm(self):
        r = self.boot(None, ["--timeout", "5s"], "sleep 1000")
        self.assertEqual(r.returncode, 125, r.stderr)
        self.assertIn("cordon: fatal: TIMEOUT:", r.stderr)

    def test_signal_into_the_guest(self):
        user = "cordon-test" if "cordon-test" in users() else None
        if user:
            self.chown(user)
        script = ("trap 'echo got-term; exit 3' TERM; echo ready; "
                  "while :; do sleep 0.1; done")
        r = subprocess.run(as_user(user) + ["env", f"HOME={self.home}", MV_SIGNAL, self.accel,
                                            "sh", "-c", script],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           cwd=self.ws, timeout=400)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "ready\ngot-term\nexit=3\n", r.stderr)
        self.assertEqual(vmm_pids() - self.before, set(), "a VMM was left running")

    def test_sigterm_of_cordon_kills_the_run(self):
        """cordon run's SIGTERM kills the sandbox (as natively: KILLED, 143): the VMM with it."""
        p = subprocess.Popen(self.argv(None, [], "echo ready; exec sleep 1000"),
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, cwd=self.ws)
        try:
            self.assertEqual(p.stdout.readline(), "ready\n")
            p.send_signal(signal.SIGTERM)
            _, err = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.assertEqual(p.returncode, 143, err)
        self.assertIn("cordon: fatal: KILLED:", err)
        self.no_vmm_within(30)

    def test_sigkill_of_cordon_leaves_no_vmm(self):
        user = "cordon-test" if "cordon-test" in users() else None
        if user:
            self.chown(user)
        p = subprocess.Popen(self.argv(user, [], "echo ready; exec sleep 1000"),
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True,
                             cwd=self.ws, start_new_session=True)
        try:
            self.assertEqual(p.stdout.readline(), "ready\n")  # the guest command runs
            self.assertTrue(vmm_pids() - self.before, "no VMM while the guest runs")
            # cordon itself (runuser's child when run as cordon-test), by its own pid.
            target = p.pid
            if user:
                with open(f"/proc/{p.pid}/task/{p.pid}/children", encoding="utf-8") as f:
                    target = int(f.read().split()[0])
            os.kill(target, signal.SIGKILL)
            p.wait(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            p.stdout.close()
        self.no_vmm_within(30)


if __name__ == "__main__":
    CORDON = os.path.abspath(sys.argv.pop(1))
    MV_SIGNAL = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
