#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The native rules inside the microvm guest (docs/design/microvm.md "The guest's rules"), one
boot as root and one as cordon-test, each running one guest script that prints what it sees:

- the syscall filter on the guest command: /proc/self/status says Seccomp 2, no_new_privs 1 and
  no capability (bounding set included), and mv-rules.c's calls (io_uring_setup, a 32-bit
  `int $0x80` syscall, PTRACE_ATTACH of another guest process, a new user namespace, bpf,
  perf_event_open, userfaultfd, keyctl, mount, finit_module, process_vm_readv, TIOCSTI,
  AF_UNIX sockets) answered in the guest exactly as in a native run of the same program, each
  refusal the filter's errno (EPERM/ENOSYS; TIOCSTI's EPERM where a pipe says ENOTTY
  unfiltered);
- the guest's /tmp and /dev/shm are the sandbox's private ones served by the VMM, so every
  creation there is judged by the host's supervisor and answered as natively: with HOME
  beneath /tmp, its protected paths (.bashrc, .gitconfig, .ssh) refused with EACCES, an
  ordinary file created, written and read back; `.env` created in /tmp, as natively (deny
  names hold beneath the writable roots only); a shared mapping of a /dev/shm file written and
  read; /dev and /proc/sys read-only (no new name in /dev, /dev/null still writable);
- the command still works: sh, ls, a file written in the workspace and present on the host.

Usage: test_microvm_rules.py CORDON MV_RULES"""
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import unittest

from mvlib import users, vmm_pids  # noqa: E402

CORDON = None
MV_RULES = None
MUST_WORK = os.environ.get("CORDON_TEST_MUST_WORK") == "1"

# What must be refused in the guest, and how (the filter's errno).
REFUSED = {"io_uring_setup": "ENOSYS", "int80": "ENOSYS", "ptrace": "EPERM",
           "unshare_user": "EPERM", "bpf": "EPERM", "perf_event_open": "EPERM",
           "userfaultfd": "EPERM", "keyctl": "EPERM", "mount": "EPERM", "finit_module": "EPERM",
           "process_vm_readv": "EPERM", "tiocsti": "EPERM", "unix_dgram": "EPERM"}

SHM_CHECK = ("import mmap, os\n"
             "fd = os.open('/dev/shm/cordon-seg', os.O_RDWR | os.O_CREAT, 0o600)\n"
             "os.ftruncate(fd, 4096)\n"
             "m = mmap.mmap(fd, 4096, mmap.MAP_SHARED)\n"
             "m[:5] = b'hello'\n"
             "n = mmap.mmap(fd, 4096, mmap.MAP_SHARED)\n"
             "print('shm=' + n[:5].decode())\n")


def as_user(user):
    return ["runuser", "-u", user, "--"] if user else []


def probe():
    r = subprocess.run([CORDON, "probe", "--json"], capture_output=True, text=True, check=True,
                       cwd="/")
    return json.loads(r.stdout)["kernel"]


def script():
    return ("grep -E '^(Seccomp|NoNewPrivs|CapEff|CapPrm|CapBnd):' /proc/self/status | "
            "tr -d '\\t' | tr ':' '='; "
            f"{MV_RULES}; "
            # Creations in the private /tmp and /dev/shm, each "create-PATH=created|refused".
            "mkdir -p \"$HOME\"; "
            "for f in \"$HOME/.bashrc\" \"$HOME/.gitconfig\" \"$HOME/notes.txt\" /tmp/.env "
            "/tmp/key.pem /tmp/ok.txt /dev/shm/.env /dev/shm/ok; do "
            "if echo x > \"$f\" 2>/dev/null; then echo \"create-$f=created\"; "
            "else echo \"create-$f=refused\"; fi; done; "
            "if mkdir \"$HOME/.ssh\" 2>/dev/null; then echo \"create-.ssh=created\"; "
            "else echo \"create-.ssh=refused\"; fi; "
            "echo ordinary > /tmp/ok.txt && echo \"tmp-ok=$(cat /tmp/ok.txt)\"; "
            "python3 -c \"$SHM\"; "
            "grep -E ' /(tmp|dev/shm) 9p ' /proc/mounts | awk '{print \"mounted=\" $1 \" \" $2}'; "
            "if touch /dev/cordon-new 2>/dev/null; then echo DEV-CREATED; fi; "
            "echo x > /dev/null && echo DEVNULL-OK; "
            "if echo '|/bin/true' > /proc/sys/kernel/core_pattern 2>/dev/null; then "
            "echo SYSCTL-WRITTEN; fi; "
            "ls / > /dev/null && echo LS-OK; "
            "echo in-ws > ws.txt && echo WS-WRITTEN; "
            "exit 3")


class Rules(unittest.TestCase):
    def setUp(self):
        k = probe()
        if not k["vmm"] or not k["guestKernel"]:
            if MUST_WORK:
                self.fail("CORDON_TEST_MUST_WORK=1: no VMM or guest kernel")
            self.skipTest("no VMM or guest kernel (scripts/install-deps.sh)")
        self.accel = "kvm" if k["kvmGuestRuns"] and k["kvmKind"] == "hardware" else "tcg"
        self.ws = tempfile.mkdtemp(prefix="cordon-microvm-rules-", dir="/var/tmp")
        self.before = vmm_pids()

    def tearDown(self):
        shutil.rmtree(self.ws)

    def run_as(self, user, backend):
        if user:
            shutil.chown(self.ws, user)
        flags = ["--backend", "microvm", "--microvm-accel", self.accel] if backend else []
        # A HOME beneath /tmp that the host does not have: the sandbox's private /tmp holds
        # it, and its protected paths (.bashrc, .gitconfig, .ssh) are refused there by the
        # supervisor; natively on the command's calls, in the guest on the VMM's.
        home = os.path.join("/tmp", "cordon-rules-home-" + os.path.basename(self.ws))
        self.assertFalse(os.path.exists(home))
        r = subprocess.run(as_user(user) + ["env", f"HOME={home}", CORDON, "run"] + flags +
                           ["--env-set", f"SHM={SHM_CHECK}", "--", "sh", "-c", script()],
                           capture_output=True, text=True, cwd=self.ws, timeout=400)
        self.assertEqual(vmm_pids() - self.before, set(), "a VMM was left running")
        return r

    @staticmethod
    def values(out):
        return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)

    def check(self, user):
        native = self.run_as(user, False)
        self.assertEqual(native.returncode, 3, native.stderr)
        os.unlink(os.path.join(self.ws, "ws.txt"))
        r = self.run_as(user, True)
        self.assertEqual(r.returncode, 3, r.stderr)
        out = r.stdout.splitlines()
        got, want = self.values(r.stdout), self.values(native.stdout)
        # The filter, no_new_privs, no capability: whatever the uid (root's included).
        self.assertEqual(got.get("Seccomp"), "2", r.stdout)
        self.assertEqual(got.get("NoNewPrivs"), "1", r.stdout)
        for c in ("CapEff", "CapPrm", "CapBnd"):
            self.assertEqual(int(got.get(c, "1"), 16), 0, f"{c} in {r.stdout}")
        # The guest answers as the native sandbox does, and each refusal is the filter's.
        for name, errno in REFUSED.items():
            self.assertEqual(got.get(name), errno, f"{name} in {r.stdout}")
            self.assertEqual(got.get(name), want.get(name), f"{name}: native {native.stdout}")
        self.assertEqual(got.get("unix_stream"), "ok", r.stdout)
        self.assertEqual(want.get("unix_stream"), "ok", native.stdout)
        # /tmp and /dev/shm: the sandbox's, through the VMM, so the supervisor judges each
        # creation as it judges the native command's: the same answers (protected paths refused
        # everywhere; deny names such as .env only beneath the writable roots, by design:
        # docs/design/creation-rules.md "Where the rules hold").
        self.assertIn("mounted=tmp /tmp", out)
        self.assertIn("mounted=shm /dev/shm", out)
        creates = {k: v for k, v in got.items() if k.startswith("create-")}
        self.assertEqual(creates, {k: v for k, v in want.items() if k.startswith("create-")},
                         f"guest {r.stdout} native {native.stdout}")
        home = [k for k in creates if k.endswith("/.bashrc")][0][len("create-"):-len("/.bashrc")]
        for f in (f"{home}/.bashrc", f"{home}/.gitconfig", ".ssh"):
            self.assertEqual(creates.get(f"create-{f}"), "refused", r.stdout)
        for f in (f"{home}/notes.txt", "/tmp/ok.txt", "/tmp/.env", "/dev/shm/ok"):
            self.assertEqual(creates.get(f"create-{f}"), "created", r.stdout)
        self.assertEqual(got.get("tmp-ok"), "ordinary", r.stdout)
        self.assertFalse(os.path.exists(home), "the guest's /tmp reached the host's")
        self.assertEqual(got.get("shm"), "hello", r.stdout + r.stderr)
        self.assertEqual(want.get("shm"), "hello", native.stdout + native.stderr)
        # The guest's own file systems: nothing new in /dev, /proc/sys unwritable.
        for bad in ("DEV-CREATED", "SYSCTL-WRITTEN"):
            self.assertNotIn(bad, out)
        for good in ("DEVNULL-OK", "LS-OK", "WS-WRITTEN"):
            self.assertIn(good, out)
        with open(os.path.join(self.ws, "ws.txt"), encoding="utf-8") as f:
            self.assertEqual(f.read(), "in-ws\n")
        if user:
            pw = pwd.getpwnam(user)
            st = os.stat(os.path.join(self.ws, "ws.txt"))
            self.assertEqual((st.st_uid, st.st_gid), (pw.pw_uid, pw.pw_gid))

    def test_rules(self):
        for user in users():
            with self.subTest(user=user or "self"):
                self.check(user)
                self.tearDown()
                self.setUp()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    CORDON, MV_RULES = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    unittest.main(argv=sys.argv[:1], verbosity=2)
