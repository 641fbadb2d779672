# SPDX-License-Identifier: Apache-2.0
"""What the microvm tests share: who they run as, which VMM processes exist, the accelerator
the probe allows, and a cordond in a directory of the test's."""
import json
import os
import pwd
import shutil
import subprocess

VMM = "/usr/bin/qemu-system-x86_64"


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


def microvm_accel(test, cordon, must_work):
    """The accelerator a session asks for ("kvm" where the probe says full, else the "tcg"
    opt-in); skips `test` where the backend is unusable (fails it with `must_work`)."""
    r = subprocess.run([cordon, "probe", "--json"], capture_output=True, text=True, check=True,
                       cwd="/")
    vm = [b for b in json.loads(r.stdout)["backends"] if b["name"] == "microvm"][0]
    if vm["status"] == "unusable":
        if must_work:
            test.fail(f"the microvm backend is unusable here: {vm}")
        test.skipTest(f"the microvm backend is unusable here: {vm.get('hint')}")
    return "kvm" if vm["status"] == "full" else "tcg"


def daemon_in(cc, directory):
    """A started cordond (tests/lib/cordond_client.py) whose socket, state and stderr are in
    `directory`, which the test owns and removes."""
    d = cc.Daemon(start=False)
    shutil.rmtree(d.dir)
    d.dir = directory
    d.sockdir = os.path.join(directory, "run")
    d.sock = os.path.join(d.sockdir, "cordond.sock")
    d.errpath = os.path.join(directory, "stderr")
    d.start()
    return d
