#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Creation cost of two or more cordon builds against bare, in the same interleaved rounds.

  bench/pairs.py --dir DIR [--rounds 15] [--files 20000] FSOPS NAME=CORDON [NAME=CORDON ...]

Each round runs `FSOPS create out N` bare and under `CORDON run --` of every build, in DIR (the
workspace: tmpfs or ext4), the order rotated by one each round, `out` removed before each run
(not timed). FSOPS is bench/fsops.c compiled; it must lie outside /tmp (the sandbox's /tmp is
private). Reported per variant: the median of fsops' own loop time, the time added per creating
syscall against bare (median of the per-round differences, so a slow round moves both sides),
and the median per-round ratio to the first build. Meant for before/after comparisons on a
loaded machine, where only same-round figures mean anything (BENCHMARKS.md).
"""
import argparse
import os
import shutil
import statistics
import subprocess


def run(argv, cwd, counts):
    """fsops' loop time; with `counts` (a list), also appends the CPU time (ms) of the whole
    process tree from `perf stat -e task-clock` (inherited by every child: cordon, its monitor
    and supervisor threads, the command). Instruction counts would be steadier, but a VM
    without hardware counters has none."""
    shutil.rmtree(os.path.join(cwd, "out"), ignore_errors=True)
    stat = os.path.join(cwd, ".perf-stat")
    if counts is not None:
        argv = ["perf", "stat", "-x,", "-e", "task-clock", "-o", stat, "--"] + argv
    out = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=True).stdout
    if counts is not None:
        ev = {}
        with open(stat) as f:
            for line in f:
                parts = line.strip().split(",")
                if len(parts) > 2 and parts[0].replace(".", "").isdigit():
                    ev[parts[2].split(":")[0]] = float(parts[0])
        os.unlink(stat)
        counts.append(ev["task-clock"])
    return float(out.split()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", required=True, help="the workspace the files are created in")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--perf", action="store_true",
                    help="also measure CPU time (perf stat): steadier than wall time under load")
    ap.add_argument("fsops")
    ap.add_argument("builds", nargs="+", metavar="NAME=CORDON")
    args = ap.parse_args()
    fsops = os.path.abspath(args.fsops)
    cmd = [fsops, "create", "out", str(args.files)]
    variants = [("bare", cmd)]
    for b in args.builds:
        name, _, path = b.partition("=")
        variants.append((name, [os.path.abspath(path), "run", "--"] + cmd))
    times = {name: [] for name, _ in variants}
    counts = {name: [] if args.perf else None for name, _ in variants}
    run(variants[-1][1], args.dir, None)  # warm-up, untimed
    for r in range(args.rounds):
        order = variants[r % len(variants):] + variants[:r % len(variants)]
        for name, argv in order:
            times[name].append(run(argv, args.dir, counts[name]))
    bare = times["bare"]
    first = variants[1][0]
    print(f"{args.rounds} rounds, {args.files} creates each, in {args.dir}; "
          f"load average {os.getloadavg()[0]:.1f}")
    for name, _ in variants:
        t = times[name]
        line = f"{name:>12}: loop median {statistics.median(t):.3f} s"
        if name != "bare":
            added = [(c - b) / args.files * 1e6 for c, b in zip(t, bare)]
            ratio = [c / f for c, f in zip(t, times[first])]
            line += (f", added per create {statistics.median(added):.1f} us "
                     f"(min {min(added):.1f}, max {max(added):.1f}), "
                     f"vs {first} {statistics.median(ratio):.2f}x")
            if args.perf:
                cpu = [(c - b) / args.files * 1e3 for c, b in zip(counts[name], counts["bare"])]
                rel = [c / f for c, f in zip(counts[name], counts[first])]
                line += (f"; CPU added per create {statistics.median(cpu):.1f} us "
                         f"(all processes), CPU vs {first} {statistics.median(rel):.2f}x")
        print(line)


if __name__ == "__main__":
    main()
