# SPDX-License-Identifier: Apache-2.0
"""What the microvm tests share: who they run as, and which VMM processes exist."""
import os
import pwd

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
