#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""cordon benchmarks: start-up and the cost of the creation rules (BENCHMARKS.md).

  bench/run.py --cordon build/cordon [--rounds 5] [--startup-rounds 200] [--write BENCHMARKS.md]

(a) start-up: cold `cordon run -- /bin/true` against bare `/bin/true` and against bubblewrap
    (`bwrap --unshare-all --die-with-parent --new-session --ro-bind / / --dev /dev --proc /proc
    true`), interleaved with the order rotated each round (bench/startup.c); medians, p90, ratios
    and the peak RSS of cordon's process tree (wait4 ru_maxrss).
(b) creation cost, each workload bare and under `cordon run` (built-in default policy, cwd = the
    workload's directory on disk) in the same run, interleaved, order rotated each round:
      create   20,000 new files (bench/fsops.c create)
      open     200,000 read-only opens of 1,000 existing files (bench/fsops.c open)
      build    `make -j2` over 300 generated C files (after `make clean`, untimed)
      git      `git init && git add -A && git commit` over 3,000 files (a fresh repo each round)
    One untimed warm-up round per workload. Wall time of the whole command is measured; for create/open the loop's own time (printed
    by fsops) is reported too, so the ratio of the operation itself is visible apart from start-up.

With --write FILE the results replace the part of FILE between the markers
<!-- results:begin --> and <!-- results:end -->.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BWRAP = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/", "/",
         "--dev", "/dev", "--proc", "/proc", "true"]


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def build_helpers(outdir):
    for name in ("fsops", "startup"):
        sh(["cc", "-O2", "-Wall", "-Wextra", "-o", os.path.join(outdir, name),
            os.path.join(HERE, name + ".c")])
    return os.path.join(outdir, "fsops"), os.path.join(outdir, "startup")


def pct(values, p):
    v = sorted(values)
    k = (len(v) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def machine(cordon):
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ver = subprocess.run([cordon, "version"], capture_output=True, text=True).stdout.strip()
    rev = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True).stdout.strip()
    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "nproc": os.cpu_count(), "kernel": platform.release(), "cpu": cpu,
            "cordon": ver or "?", "commit": rev or "?", "uid": os.getuid()}


# ---- (a) start-up ----------------------------------------------------------------------------

def bench_startup(startup, cordon, rounds, env, cwd):
    cmd = [startup, str(rounds), "5", "bare", "/bin/true", "::",
           "cordon", cordon, "run", "--", "/bin/true"]
    if shutil.which("bwrap"):
        cmd += ["::", "bwrap"] + BWRAP
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env, cwd=cwd).stdout
    res = {}
    for line in out.splitlines():
        d = json.loads(line)
        res[d["label"]] = {
            "runs": d["runs"], "failures": d["failures"],
            "median_ms": statistics.median(d["ms"]), "p90_ms": pct(d["ms"], 0.9),
            "mean_ms": statistics.fmean(d["ms"]),
            "rss_max_kib": max(d["maxrss_kib"]), "rss_median_kib": statistics.median(d["maxrss_kib"]),
        }
    return res


# ---- (b) workloads ---------------------------------------------------------------------------

def write_build_tree(d, n=300):
    os.makedirs(d, exist_ok=True)
    objs = []
    for i in range(n):
        with open(os.path.join(d, f"u{i}.c"), "w") as f:
            f.write(f"#include <stdio.h>\n#include <string.h>\n"
                    f"int u{i}(const char *s) {{ int h = {i}; for (; *s; s++) h = h * 31 + *s;"
                    f" return h ^ (int) strlen(\"u{i}\"); }}\n")
        objs.append(f"u{i}.o")
    with open(os.path.join(d, "main.c"), "w") as f:
        f.write("int main(void) { return 0; }\n")
    with open(os.path.join(d, "Makefile"), "w") as f:
        f.write("OBJS = main.o " + " ".join(objs) + "\n"
                "prog: $(OBJS)\n\tcc -o $@ $(OBJS)\n"
                "%.o: %.c\n\tcc -O1 -c -o $@ $<\n"
                "clean:\n\trm -f prog *.o\n")


def write_git_tree(d, n=3000):
    for i in range(n):
        sub = os.path.join(d, f"dir{i // 100:02d}")
        os.makedirs(sub, exist_ok=True)
        with open(os.path.join(sub, f"file{i}.txt"), "w") as f:
            f.write(f"line {i}\n" * (1 + i % 7))


class Workload:
    def __init__(self, name, cwd, cmd, prep=None, inner=False):
        self.name, self.cwd, self.cmd, self.prep, self.inner = name, cwd, cmd, prep, inner


def workloads(root, fsops):
    make_dir = os.path.join(root, "build")
    git_dir = os.path.join(root, "git")
    create_dir = os.path.join(root, "create")
    open_dir = os.path.join(root, "open")
    for d in (create_dir, open_dir, git_dir):
        os.makedirs(d, exist_ok=True)
    sh([fsops, "prepare", os.path.join(open_dir, "files"), "1000"], stdout=subprocess.DEVNULL)
    write_build_tree(make_dir)
    write_git_tree(os.path.join(git_dir, "repo"))

    def clean_create():
        shutil.rmtree(os.path.join(create_dir, "out"), ignore_errors=True)

    def clean_build():
        sh(["make", "-s", "clean"], cwd=make_dir, stdout=subprocess.DEVNULL)

    def clean_git():
        shutil.rmtree(os.path.join(git_dir, "repo", ".git"), ignore_errors=True)

    git = ("cd repo && git init -q && git add -A && "
           "git -c user.name=bench -c user.email=bench@example.invalid commit -qm x")
    return [
        Workload("create 20,000 files", create_dir, [fsops, "create", "out", "20000"],
                 clean_create, inner=True),
        Workload("open 200,000 existing files (read-only)", open_dir,
                 [fsops, "open", "files", "200000"], None, inner=True),
        Workload("make -j2, 300 C files", make_dir, ["make", "-s", "-j2"], clean_build),
        Workload("git init && add -A && commit, 3,000 files", git_dir, ["sh", "-c", git], clean_git),
    ]


def timed(cmd, cwd, env):
    os.sync()  # the previous run's dirty pages are not this run's cost
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    dt = time.monotonic() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{cmd} in {cwd} failed ({p.returncode}): {p.stderr.strip()[-500:]}")
    inner = None
    try:
        inner = float(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        pass
    return dt, inner


def bench_workloads(wls, cordon, rounds, env):
    res = {}
    for w in wls:
        runs = {"bare": [], "cordon": []}
        inner = {"bare": [], "cordon": []}
        # One untimed round first: the first run in a fresh directory would otherwise be the only
        # one that does not pay for the previous run's deletes (ext4 journal and discard).
        for v in ("bare", "cordon"):
            if w.prep:
                w.prep()
            timed(w.cmd if v == "bare" else [cordon, "run", "--"] + w.cmd, w.cwd, env)
        for r in range(rounds):
            order = ["bare", "cordon"] if r % 2 == 0 else ["cordon", "bare"]
            for v in order:
                if w.prep:
                    w.prep()
                cmd = w.cmd if v == "bare" else [cordon, "run", "--"] + w.cmd
                dt, it = timed(cmd, w.cwd, env)
                runs[v].append(dt)
                if it is not None:
                    inner[v].append(it)
            print(f"  {w.name}: round {r + 1}/{rounds}: bare {runs['bare'][-1]:.3f}s, "
                  f"cordon {runs['cordon'][-1]:.3f}s", file=sys.stderr)
        if w.prep:
            w.prep()
        row = {v: statistics.median(runs[v]) for v in runs}
        row["ratio"] = row["cordon"] / row["bare"]
        row["all"] = runs
        if w.inner and inner["bare"] and inner["cordon"]:
            row["inner_bare"] = statistics.median(inner["bare"])
            row["inner_cordon"] = statistics.median(inner["cordon"])
            row["inner_ratio"] = row["inner_cordon"] / row["inner_bare"]
        res[w.name] = row
    return res


# ---- report ----------------------------------------------------------------------------------

TARGETS = {
    "create 20,000 files": (None, "report"),
    "open 200,000 existing files (read-only)": (1.05, "≤ 1.05×"),
    "make -j2, 300 C files": (1.10, "≤ 1.10×"),
    "git init && add -A && commit, 3,000 files": (1.25, "≤ 1.25×"),
}


def verdict(ok):
    return "met" if ok else "**NOT met**"


def report(m, st, wl, args, fs):
    out = []
    out.append(f"Measured {m['date']} on {m['nproc']} CPUs ({m['cpu']}), kernel {m['kernel']}, "
               f"{m['cordon']} at commit {m['commit']}, as uid {m['uid']}; workloads on {fs}.")
    out.append("")
    out.append(f"Command: `{args.command_line}`")
    out.append("")
    out.append(f"### Start-up ({st['bare']['runs']} interleaved rounds, 5 warm-up rounds)")
    out.append("")
    out.append("| command | median | p90 | mean | peak RSS (max / median) | failures |")
    out.append("|---|---|---|---|---|---|")
    for label, name in (("bare", "`/bin/true`"), ("cordon", "`cordon run -- /bin/true`"),
                        ("bwrap", "`bwrap --unshare-all ... true`")):
        if label in st:
            s = st[label]
            out.append(f"| {name} | {s['median_ms']:.2f} ms | {s['p90_ms']:.2f} ms | "
                       f"{s['mean_ms']:.2f} ms | {s['rss_max_kib'] / 1024:.2f} / "
                       f"{s['rss_median_kib'] / 1024:.2f} MiB | {s['failures']} |")
    out.append("")
    c = st["cordon"]
    if "bwrap" in st:
        b = st["bwrap"]
        out.append(f"- cordon / bwrap (median): **{c['median_ms'] / b['median_ms']:.2f}×** — target "
                   f"≤ 1.00×: {verdict(c['median_ms'] <= b['median_ms'])}")
    out.append(f"- cordon / bare `/bin/true` (median): {c['median_ms'] / st['bare']['median_ms']:.1f}×")
    out.append(f"- peak RSS of cordon's process tree: **{c['rss_max_kib'] / 1024:.2f} MiB** (largest "
               f"single process of the tree, max over all runs) — target < 5 MiB: "
               f"{verdict(c['rss_max_kib'] < 5 * 1024)}")
    out.append("")
    out.append(f"### Creation rules: bare vs `cordon run` ({args.rounds} interleaved rounds, medians)")
    out.append("")
    out.append("| workload | bare | cordon | ratio | loop only (bare / cordon / ratio) | target |")
    out.append("|---|---|---|---|---|---|")
    for name, row in wl.items():
        limit, text = TARGETS.get(name, (None, "report"))
        inner = "–"
        if "inner_ratio" in row:
            inner = (f"{row['inner_bare']:.3f} s / {row['inner_cordon']:.3f} s / "
                     f"{row['inner_ratio']:.2f}×")
        tgt = text
        if limit is not None:
            # open: the target is about the opens themselves, so the loop's own time decides.
            r = row.get("inner_ratio", row["ratio"]) if name.startswith("open") else row["ratio"]
            tgt = f"{text}: {verdict(r <= limit)}"
        out.append(f"| {name} | {row['bare']:.3f} s | {row['cordon']:.3f} s | "
                   f"**{row['ratio']:.2f}×** | {inner} | {tgt} |")
    out.append("")
    out.append("Every round (seconds, bare / cordon):")
    out.append("")
    for name, row in wl.items():
        pairs = ", ".join(f"{b:.3f}/{c:.3f}" for b, c in zip(row["all"]["bare"], row["all"]["cordon"]))
        out.append(f"- {name}: {pairs}")
    return "\n".join(out) + "\n"


def write_section(path, text, name):
    """Replaces what stands between <!-- NAME:begin --> and <!-- NAME:end --> in FILE."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    doc = open(path).read()
    if begin not in doc or end not in doc:
        raise SystemExit(f"{path}: markers {begin} / {end} not found")
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    open(path, "w").write(head + begin + "\n" + text + end + tail)


def write_md(path, text):
    write_section(path, text, "results")


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def cpu_ticks():
    """/proc/stat's first line: user nice system idle iowait irq softirq steal."""
    with open("/proc/stat") as f:
        return [int(x) for x in f.readline().split()[1:9]]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cordon", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--startup-rounds", type=int, default=200)
    ap.add_argument("--dir", default="/var/tmp", help="where the workloads run (on disk)")
    ap.add_argument("--write", metavar="FILE", help="update the results section of FILE")
    ap.add_argument("--only", choices=["startup", "workloads"])
    args = ap.parse_args()
    args.command_line = " ".join(["bench/run.py"] + [a if " " not in a else repr(a)
                                                      for a in sys.argv[1:]])
    cordon = os.path.abspath(args.cordon)
    root = tempfile.mkdtemp(prefix="cordon-bench.", dir=args.dir)
    try:
        home = os.path.join(root, "home")
        os.makedirs(home)
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "LC_ALL": "C"}
        os.makedirs(os.path.join(root, "bin"))
        fsops, startup = build_helpers(os.path.join(root, "bin"))
        fs = subprocess.run(["df", "--output=fstype", root], capture_output=True,
                            text=True).stdout.split()[-1]
        m = machine(cordon)
        st, wl = None, {}
        if args.only != "workloads":
            print("start-up ...", file=sys.stderr)
            ws = os.path.join(root, "startup")
            os.makedirs(ws)
            st = bench_startup(startup, cordon, args.startup_rounds, env, ws)
            print(json.dumps(st, indent=1), file=sys.stderr)
        if args.only != "startup":
            print("workloads ...", file=sys.stderr)
            wl = bench_workloads(workloads(os.path.join(root, "w"), fsops), cordon, args.rounds, env)
        if st is None:
            raise SystemExit("the report needs the start-up part too")
        text = report(m, st, wl, args, fs)
        print(text)
        if args.write:
            write_md(args.write, text)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
