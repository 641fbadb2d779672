#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/microvm-boot.py: the microvm backend's components, measured before its runtime exists
(docs/design/microvm.md, BENCHMARKS.md "microvm"). Boots Debian's kernel (the probe's guest
kernel) in qemu's microvm machine with a hand-built initramfs — bench/microvm-init.c as /init,
the 9p modules — that mounts the host's root read-only over virtio-9p and runs /bin/true from it
twice; each phase is stamped by the host's clock as its line arrives on the serial console.
Prints one markdown table of medians. Not part of `make bench`: under TCG a boot takes tens of
seconds.
    bench/microvm-boot.py [--accel tcg|kvm] [--rounds N] [--cordon build/cordon]"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODULES = ["drivers/virtio/virtio_ring", "drivers/virtio/virtio", "drivers/virtio/virtio_mmio",
           "drivers/char/virtio_console", "net/9p/9pnet", "net/9p/9pnet_virtio",
           "fs/netfs/netfs", "fs/fscache/fscache", "fs/9p/9p"]


def newc(entries, out):
    """A newc cpio archive of (name, mode, data) entries."""
    with open(out, "wb") as f:
        for ino, (name, mode, data) in enumerate(entries + [("TRAILER!!!", 0, b"")], 1):
            fields = (ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name) + 1, 0)
            head = b"070701" + b"".join(b"%08X" % v for v in fields) + name.encode() + b"\0"
            f.write(head + b"\0" * (-len(head) % 4) + data + b"\0" * (-len(data) % 4))


def build_initramfs(tmp, modules_dir):
    init = os.path.join(tmp, "init")
    subprocess.run(["gcc", "-static", "-Os", "-Wall", "-Werror", "-o", init,
                    os.path.join(HERE, "microvm-init.c")], check=True)
    entries = [("m", 0o40755, b""), ("proc", 0o40755, b""), ("dev", 0o40755, b""),
               ("init", 0o100755, open(init, "rb").read())]
    for m in MODULES:
        with open(os.path.join(modules_dir, "kernel", m + ".ko"), "rb") as f:
            entries.append(("m/" + os.path.basename(m) + ".ko", 0o100644, f.read()))
    out = os.path.join(tmp, "initramfs.cpio")
    newc(entries, out)
    return out


def boot(qemu, kernel, initrd, accel):
    # earlyprintk, loglevel=6: "Linux version" (KERN_NOTICE) marks the kernel's start as it
    # happens. ACPI describes the virtio-mmio devices (Debian's kernel has no
    # CONFIG_VIRTIO_MMIO_CMDLINE_DEVICES); under TCG the TSC cannot be calibrated without a
    # hint (the boot hangs after "could not calculate TSC khz"), hence tsc_early_khz.
    argv = [qemu, "-M", f"microvm,accel={accel},acpi=on,pit=on,pic=on,rtc=on", "-cpu",
            "max" if accel == "tcg" else "host", "-m", "512", "-smp", "1", "-nodefaults",
            "-no-user-config", "-display", "none", "-no-reboot", "-kernel", kernel,
            "-initrd", initrd, "-serial", "stdio",
            "-append", "earlyprintk=ttyS0 console=ttyS0 loglevel=6 rdinit=/init panic=-1 "
                       "tsc_early_khz=2000000",
            "-device", "isa-debug-exit,iobase=0xf4,iosize=1",
            "-fsdev", "local,id=h,path=/,security_model=none,readonly=on",
            "-device", "virtio-9p-device,fsdev=h,mount_tag=host"]
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    marks = {}
    for raw in p.stdout:
        line = raw.decode(errors="replace")
        now = (time.monotonic() - t0) * 1000
        if "Linux version" in line and "kernel" not in marks:
            marks["kernel"] = now
        elif line.startswith("T "):
            marks[line.split()[1]] = now
        elif line.startswith("E "):
            raise SystemExit("guest: " + line.strip())
    p.wait()
    marks["exit"] = (time.monotonic() - t0) * 1000
    if p.returncode != 1 or "exec2" not in marks:  # isa-debug-exit with 0 exits qemu with 1
        raise SystemExit(f"boot failed (qemu status {p.returncode}, phases {sorted(marks)})")
    return marks


def native(cordon, rounds):
    times = []
    for _ in range(rounds):
        t0 = time.monotonic()
        subprocess.run([cordon, "run", "--", "true"], check=True, cwd=tempfile.gettempdir())
        times.append((time.monotonic() - t0) * 1000)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--accel", default="tcg", choices=["tcg", "kvm"])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cordon", default="build/cordon")
    a = ap.parse_args()
    a.cordon = os.path.abspath(a.cordon)
    probe = json.loads(subprocess.run([a.cordon, "probe", "--json"], capture_output=True,
                                      text=True, check=True).stdout)["kernel"]
    if not probe["vmm"] or not probe["guestKernel"]:
        raise SystemExit("no VMM or guest kernel (cordon probe; scripts/install-deps.sh)")
    with tempfile.TemporaryDirectory() as tmp:
        initrd = build_initramfs(tmp, probe["guestModules"])
        runs = [boot(probe["vmm"], probe["guestKernel"], initrd, a.accel)
                for _ in range(a.rounds)]
    phases = [("VMM start, firmware, kernel decompression", None, "kernel"),
              ("kernel boot to /init", "kernel", "init"),
              ("initramfs: 9 modules, 9p mount", "init", "mounted"),
              ("first exec (/bin/true over 9p)", "mounted", "exec1"),
              ("second exec", "exec1", "exec2"),
              ("boot to ready (VMM start to 9p mounted)", None, "mounted"),
              ("whole run to VMM exit", None, "exit")]
    print(f"| phase ({a.accel}, {a.rounds} boots, medians) | ms |\n|---|---:|")
    for name, start, end in phases:
        ms = statistics.median(r[end] - (r[start] if start else 0) for r in runs)
        print(f"| {name} | {ms:.0f} |")
    print(f"| native `cordon run -- true` (same host, {a.rounds * 3} runs) | "
          f"{native(a.cordon, a.rounds * 3):.0f} |")


if __name__ == "__main__":
    sys.exit(main())
