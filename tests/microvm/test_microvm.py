#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The microvm backend (docs/design/microvm.md) as far as this version builds it: the probe's
facts (KVM that runs a test guest, which KVM it is, the VMM, the guest kernel) checked against
independent evidence, and an explicit `--backend microvm` refused loudly — exit 125, one
`cordon: fatal: SANDBOX_UNAVAILABLE` line carrying the probe's hint, the command not run, no VMM
process left — as root and, when run as root with the account present, as cordon-test.

CORDON_TEST_MUST_WORK=1: qemu and the guest kernel must be present (CI installs them with
scripts/install-deps.sh); their absence fails instead of being reported.

The guest half (tests/microvm/vm-exec.c: the agent, the initramfs cordon writes, the channel's
frames) boots twice under `cordon run`, so the VMM runs inside the native sandbox as
docs/design/microvm.md designs it: exit status, stdout and stderr, the host's root read-only,
a secret of the sandbox's HOME absent from the guest, a signal's 128+N, no VMM left behind — as
root, and as cordon-test. The accelerator is KVM when the probe finds hardware KVM, else TCG.

Usage: test_microvm.py CORDON VM_EXEC GUEST_AGENT"""
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import unittest

CORDON = None
VM_EXEC = None
AGENT = None
MUST_WORK = os.environ.get("CORDON_TEST_MUST_WORK") == "1"
VMM = "/usr/bin/qemu-system-x86_64"


def as_user(user):
    """The argv prefix that runs a command as `user` (None: as ourselves)."""
    return ["runuser", "-u", user, "--"] if user else []


def users():
    """Ourselves, and cordon-test too when we are root and it exists."""
    out = [None]
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("cordon-test")
            out.append("cordon-test")
        except KeyError:
            pass
    return out


def probe(user):
    r = subprocess.run(as_user(user) + [CORDON, "probe", "--json"], capture_output=True,
                       text=True, check=True, cwd="/")
    return json.loads(r.stdout)


def vmm_pids():
    """The processes running the VMM binary, by their executable (not their name)."""
    pids = set()
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if os.readlink(f"/proc/{d}/exe") == VMM:
                    pids.add(int(d))
            except OSError:
                pass
    return pids


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
        # Not built yet: never usable, never the unspecified default.
        self.assertEqual(mv["status"], "unusable")
        self.assertIn("not built into this version", mv["hint"])
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
    def refused(self, user):
        hint = [b for b in probe(user)["backends"] if b["name"] == "microvm"][0]["hint"]
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
                "the microvm backend is not available: "), lines[0])
            self.assertIn(hint, lines[0])  # every missing prerequisite, as the probe says
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


class Guest(unittest.TestCase):
    """One boot each; skipped (failed under CORDON_TEST_MUST_WORK=1) without VMM or kernel."""

    def setUp(self):
        k = probe(None)["kernel"]
        if not k["vmm"] or not k["guestKernel"]:
            if MUST_WORK:
                self.fail("CORDON_TEST_MUST_WORK=1: no VMM or guest kernel")
            self.skipTest("no VMM or guest kernel (scripts/install-deps.sh)")
        self.accel = "kvm" if k["kvmKind"] == "hardware" else "tcg"
        # Not under /tmp: the guest mounts a tmpfs of its own there, which would hide the secret
        # whatever the sandbox does.
        self.home = tempfile.mkdtemp(prefix="cordon-microvm-home-", dir="/var/tmp")
        self.ws = os.path.join(self.home, "ws")
        os.makedirs(os.path.join(self.home, ".ssh"))
        os.mkdir(self.ws)
        with open(os.path.join(self.home, ".ssh", "id_guest"), "w", encoding="utf-8") as f:
            f.write("SECRET-KEY\n")
        os.chmod(self.home, 0o755)

    def tearDown(self):
        shutil.rmtree(self.home)

    def boot(self, user, script):
        if user:
            for d, _, files in os.walk(self.home):
                shutil.chown(d, user)
                for n in files:
                    shutil.chown(os.path.join(d, n), user)
        env = dict(os.environ, HOME=self.home)
        before = vmm_pids()
        r = subprocess.run(as_user(user) + ["env", f"HOME={self.home}", CORDON, "run", "--",
                                            VM_EXEC, AGENT, self.accel, "sh", "-c", script],
                           capture_output=True, text=True, cwd=self.ws, env=env, timeout=400)
        self.assertEqual(vmm_pids() - before, set(), "a VMM was left running")
        return r

    def test_exit_output_readonly_root_no_secret(self):
        secret = os.path.join(self.home, ".ssh", "id_guest")
        script = ("echo out; echo err >&2; "
                  "if touch /etc/cordon-guest-write 2>/dev/null; then echo ROOT-WRITABLE; fi; "
                  f"if cat {secret} 2>/dev/null; then echo SECRET-READ; fi; "
                  # The channel port and the virtio nodes are not in the command's /dev.
                  "for d in /dev/vport0p1 /dev/vda /dev/hvc0; do "
                  "if [ -e $d ]; then echo DEVICE-$d; fi; done; "
                  "if [ ! -c /dev/null ]; then echo NO-DEV-NULL; fi; "
                  "exit 7")
        with open(secret, encoding="utf-8") as f:
            self.assertEqual(f.read(), "SECRET-KEY\n")  # there on the host
        r = self.boot(None, script)
        self.assertEqual(r.returncode, 7, r.stderr)
        self.assertEqual(r.stdout, "out\n")
        self.assertIn("err\n", r.stderr)
        self.assertFalse(os.path.exists("/etc/cordon-guest-write"))

    def test_signal_as_unprivileged_user(self):
        user = "cordon-test" if "cordon-test" in users() else None
        r = self.boot(user, "echo before; kill -TERM $$; echo after")
        self.assertEqual(r.returncode, 128 + 15, r.stderr)
        self.assertEqual(r.stdout, "before\n")


if __name__ == "__main__":
    CORDON = os.path.abspath(sys.argv.pop(1))
    VM_EXEC = os.path.abspath(sys.argv.pop(1))
    AGENT = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
