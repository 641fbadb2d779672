#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The microvm backend (docs/design/microvm.md) as far as this version builds it: the probe's
facts (KVM that runs a test guest, which KVM it is, the VMM, the guest kernel) checked against
independent evidence, and an explicit `--backend microvm` refused loudly — exit 125, one
`cordon: fatal: SANDBOX_UNAVAILABLE` line carrying the probe's hint, the command not run, no VMM
process left — as root and, when run as root with the account present, as cordon-test.

CORDON_TEST_MUST_WORK=1: qemu and the guest kernel must be present (CI installs them with
scripts/install-deps.sh); their absence fails instead of being reported.

Usage: test_microvm.py CORDON"""
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import unittest

CORDON = None
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


if __name__ == "__main__":
    CORDON = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
