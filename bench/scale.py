#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How cordon's start-up grows with the policy and the workspace (BENCHMARKS.md, "Scale").

  bench/scale.py --cordon build/cordon [--rounds 60] [--dir DIR]

Times `cordon run --policy F -- /bin/true` cold (bench/startup.c: interleaved, the order rotated
each round, medians) for policies with 10, 100 and 1,000 `denyRead` paths (existing files, so
each one is looked up and covered by a mount) and with 10, 100 and 1,000 `egressAllowlist`
domains, beside the default policy and bare `/bin/true`; then the default policy in workspaces
of 0, 10,000 and 50,000 files. Prints a Markdown table per series. DIR (default: a fresh
directory under /var/tmp) must lie outside /tmp: the sandbox's /tmp is private.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = (10, 100, 1000)


def build_startup(outdir):
    exe = os.path.join(outdir, "startup")
    subprocess.run(["cc", "-O2", "-o", exe, os.path.join(HERE, "startup.c")], check=True)
    return exe


def write_policy(path, key, values):
    with open(path, "w") as f:
        json.dump({key: values}, f)


def path_policies(root):
    """denyRead of N existing files each: every entry is resolved and covered by a mount."""
    files = os.path.join(root, "denied")
    os.makedirs(files, exist_ok=True)
    for i in range(max(SIZES)):
        open(os.path.join(files, "f%04d" % i), "w").close()
    out = {}
    for n in SIZES:
        p = os.path.join(root, "paths-%d.json" % n)
        write_policy(p, "denyRead", [os.path.join(files, "f%04d" % i) for i in range(n)])
        out["%d paths" % n] = p
    return out


def domain_policies(root):
    out = {}
    for n in SIZES:
        p = os.path.join(root, "domains-%d.json" % n)
        write_policy(p, "egressAllowlist", ["host%04d.example.com" % i for i in range(n)])
        out["%d domains" % n] = p
    return out


def timed(startup, rounds, variants, cwd):
    cmd = [startup, str(rounds), "5"]
    for i, (label, argv) in enumerate(variants):
        cmd += ([] if i == 0 else ["::"]) + [label] + argv
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=cwd).stdout
    res = {}
    for line in out.splitlines():
        d = json.loads(line)
        if d["failures"]:
            raise SystemExit("%s failed %d of %d runs" % (d["label"], d["failures"], d["runs"]))
        res[d["label"]] = statistics.median(d["ms"])
    return res


def table(title, res, base):
    lines = ["%s (median ms; added over the default policy)" % title, "",
             "| variant | median | added |", "|---|---|---|"]
    for label, ms in res.items():
        added = "" if label in ("bare", base) else "%+.2f ms" % (ms - res[base])
        lines.append("| %s | %.2f ms | %s |" % (label, ms, added))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cordon", required=True)
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--dir")
    args = ap.parse_args()
    cordon = os.path.abspath(args.cordon)
    root = args.dir or tempfile.mkdtemp(prefix="cordon-scale-", dir="/var/tmp")
    os.makedirs(root, exist_ok=True)
    try:
        startup = build_startup(root)
        ws = os.path.join(root, "ws")
        os.makedirs(ws, exist_ok=True)
        run = [cordon, "run"]
        variants = [("bare", ["/bin/true"]), ("default", run + ["--", "/bin/true"])]
        for label, p in list(path_policies(root).items()) + list(domain_policies(root).items()):
            variants.append((label, run + ["--policy", p, "--", "/bin/true"]))
        print(table("Start-up against the number of policy rules",
                    timed(startup, args.rounds, variants, ws), "default"))
        sizes = {}
        for n in (0, 10000, 50000):
            d = os.path.join(root, "ws-%d" % n)
            os.makedirs(d, exist_ok=True)
            for i in range(n):
                sub = os.path.join(d, "d%03d" % (i // 1000))
                if i % 1000 == 0:
                    os.makedirs(sub, exist_ok=True)
                open(os.path.join(sub, "f%04d" % i), "w").close()
            sizes[n] = d
        res = {}
        for n, d in sizes.items():
            # One series per workspace: the workspace is the command's cwd.
            r = timed(startup, args.rounds, [("bare", ["/bin/true"]),
                                              ("default", run + ["--", "/bin/true"])], d)
            res["%d files" % n] = r["default"] - r["bare"]
        lines = ["Start-up against the workspace's size (median ms added over bare)", "",
                 "| workspace | added |", "|---|---|"]
        lines += ["| %s | %+.2f ms |" % (k, v) for k, v in res.items()]
        print("\n".join(lines))
    finally:
        if not args.dir:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
