#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""cordon benchmarks: start-up and the cost of the creation rules (BENCHMARKS.md).

  bench/run.py --cordon build/cordon [--rounds 5] [--startup-rounds 200] [--peers DIR]
               [--write BENCHMARKS.md]

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
      tar      `tar xzf` of a 10,000-file archive (into a fresh directory each round)
    With bubblewrap installed, and with --peers DIR (bench/peers.sh installs Codex CLI and srt
    there), every workload also runs under `bwrap` (the host read-only, the workload's directory
    writable), `codex sandbox` (permission profile ":workspace") and `srt` (writes allowed in the
    run's directory) in the same interleaved rounds: one table, workload x bare/cordon/peers.
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
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BWRAP = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/", "/",
         "--dev", "/dev", "--proc", "/proc", "true"]


class Variants:
    """How each sandbox runs a command in a directory it may write: bare, cordon, and the peers
    that are installed (bwrap from Debian; codex and srt from bench/peers.sh's DIR)."""

    def __init__(self, cordon, peers, root):
        self.cordon = cordon
        self.names = ["bare", "cordon"]
        if shutil.which("bwrap"):
            self.names.append("bwrap")
        self.codex = self.srt = None
        if peers:
            codex = os.path.join(peers, "node_modules", ".bin", "codex")
            srt = os.path.join(peers, "node_modules", ".bin", "srt")
            if os.access(codex, os.X_OK):
                self.codex = codex
                self.names.append("codex")
            if os.access(srt, os.X_OK) and shutil.which("socat") and shutil.which("rg"):
                self.srt = srt
                self.names.append("srt")
                # srt reads its policy from a settings file: writes in the run's tree only.
                self.srt_settings = os.path.join(root, "srt-settings.json")
                with open(self.srt_settings, "w") as f:
                    json.dump({"network": {"allowedDomains": [], "deniedDomains": []},
                               "filesystem": {"denyRead": [], "allowWrite": [root],
                                              "denyWrite": []}}, f)
        self.codex_home = os.path.join(peers, "codex-home") if peers else None

    def argv(self, name, cmd, cwd):
        if name == "bare":
            return list(cmd)
        if name == "cordon":
            return [self.cordon, "run", "--"] + list(cmd)
        if name == "bwrap":
            return (["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind",
                     "/", "/", "--bind", cwd, cwd, "--dev", "/dev", "--proc", "/proc",
                     "--chdir", cwd] + list(cmd))
        if name == "codex":
            return [self.codex, "sandbox", "-P", ":workspace", "-C", cwd, "--"] + list(cmd)
        if name == "srt":
            return [self.srt, "-s", self.srt_settings, "-c", shlex.join(cmd)]
        raise ValueError(name)

    def env(self, base):
        e = dict(base)
        if self.codex_home:
            e["CODEX_HOME"] = self.codex_home
        return e


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

def bench_startup(startup, variants, rounds, env, cwd):
    cmd = [startup, str(rounds), "5", "bare", "/bin/true", "::",
           "cordon", variants.cordon, "run", "--", "/bin/true"]
    if "bwrap" in variants.names:
        cmd += ["::", "bwrap"] + BWRAP
    for peer in ("codex", "srt"):
        if peer in variants.names:
            cmd += ["::", peer] + variants.argv(peer, ["/bin/true"], cwd)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=variants.env(env),
                         cwd=cwd).stdout
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


def write_tar_archive(path, src, n=10000):
    """A gzip'd tar of n small files in 100 directories (made once, outside the timed runs)."""
    for i in range(n):
        sub = os.path.join(src, f"d{i // 100:03d}")
        os.makedirs(sub, exist_ok=True)
        with open(os.path.join(sub, f"f{i}.js"), "w") as f:
            f.write(f"module.exports = {i};\n")
    sh(["tar", "czf", path, "-C", src, "."])
    shutil.rmtree(src)


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

    tar_dir = os.path.join(root, "tar")
    os.makedirs(tar_dir, exist_ok=True)
    write_tar_archive(os.path.join(tar_dir, "tree.tar.gz"), os.path.join(root, "tar-src"))

    def clean_tar():
        shutil.rmtree(os.path.join(tar_dir, "out"), ignore_errors=True)
        os.makedirs(os.path.join(tar_dir, "out"))

    git = ("cd repo && git init -q && git add -A && "
           "git -c user.name=bench -c user.email=bench@example.invalid commit -qm x")
    return [
        Workload("create 20,000 files", create_dir, [fsops, "create", "out", "20000"],
                 clean_create, inner=True),
        Workload("open 200,000 existing files (read-only)", open_dir,
                 [fsops, "open", "files", "200000"], None, inner=True),
        Workload("make -j2, 300 C files", make_dir, ["make", "-s", "-j2"], clean_build),
        Workload("git init && add -A && commit, 3,000 files", git_dir, ["sh", "-c", git], clean_git),
        Workload("tar xzf, 10,000 files", tar_dir, ["tar", "xzf", "tree.tar.gz", "-C", "out"],
                 clean_tar),
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


def bench_workloads(wls, variants, rounds, env):
    res = {}
    env = variants.env(env)
    names = variants.names
    for w in wls:
        runs = {v: [] for v in names}
        inner = {v: [] for v in names}
        # One untimed round first: the first run in a fresh directory would otherwise be the only
        # one that does not pay for the previous run's deletes (ext4 journal and discard).
        for v in names:
            if w.prep:
                w.prep()
            timed(variants.argv(v, w.cmd, w.cwd), w.cwd, env)
        for r in range(rounds):
            # Interleaved, the order rotated each round, so a drift of the machine's speed is
            # shared by every variant.
            order = names[r % len(names):] + names[:r % len(names)]
            for v in order:
                if w.prep:
                    w.prep()
                dt, it = timed(variants.argv(v, w.cmd, w.cwd), w.cwd, env)
                runs[v].append(dt)
                if it is not None:
                    inner[v].append(it)
            print(f"  {w.name}: round {r + 1}/{rounds}: " +
                  ", ".join(f"{v} {runs[v][-1]:.3f}s" for v in names), file=sys.stderr)
        if w.prep:
            w.prep()
        row = {v: statistics.median(runs[v]) for v in names}
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
    "make -j2, 300 C files": (1.05, "≤ 1.05×"),
    "git init && add -A && commit, 3,000 files": (1.25, "≤ 1.25×"),
    "tar xzf, 10,000 files": (1.20, "≤ 1.20×"),
}
PEERS = ("bwrap", "codex", "srt")


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
                        ("bwrap", "`bwrap --unshare-all ... true`"),
                        ("codex", "`codex sandbox -P :workspace -C DIR -- /bin/true`"),
                        ("srt", "`srt -s SETTINGS -c /bin/true`")):
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
                   f"≤ 0.70×: {verdict(c['median_ms'] <= 0.7 * b['median_ms'])}")
    for peer in ("codex", "srt"):
        if peer in st:
            out.append(f"- cordon / {peer} (median): {c['median_ms'] / st[peer]['median_ms']:.2f}×")
    out.append(f"- cordon / bare `/bin/true` (median): {c['median_ms'] / st['bare']['median_ms']:.1f}×")
    out.append(f"- peak RSS of cordon's process tree: **{c['rss_max_kib'] / 1024:.2f} MiB** (largest "
               f"single process of the tree, max over all runs) — target < 5 MiB: "
               f"{verdict(c['rss_max_kib'] < 5 * 1024)}")
    out.append("")
    names = [v for v in ("bare", "cordon") + PEERS if wl and v in next(iter(wl.values()))]
    out.append(f"### Workloads: bare, `cordon run` and the peers ({args.rounds} interleaved rounds, "
               f"medians; ratio to bare in parentheses)")
    out.append("")
    out.append("| workload | " + " | ".join(names) + " | loop only (bare / cordon / ratio) | "
               "target (cordon / bare) |")
    out.append("|---|" + "---|" * len(names) + "---|---|")
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
        cells = [f"{row['bare']:.3f} s"] + [
            (f"**{row[v]:.3f} s ({row[v] / row['bare']:.2f}×)**" if v == "cordon"
             else f"{row[v]:.3f} s ({row[v] / row['bare']:.2f}×)") for v in names[1:]]
        out.append(f"| {name} | " + " | ".join(cells) + f" | {inner} | {tgt} |")
    out.append("")
    out.append("Every round (seconds, " + " / ".join(names) + "):")
    out.append("")
    for name, row in wl.items():
        rounds = zip(*(row["all"][v] for v in names))
        out.append(f"- {name}: " + ", ".join("/".join(f"{x:.3f}" for x in r) for r in rounds))
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
    ap.add_argument("--peers", metavar="DIR",
                    help="where bench/peers.sh installed Codex CLI and srt (measured when present)")
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
        variants = Variants(cordon, os.path.abspath(args.peers) if args.peers else None, root)
        st, wl = None, {}
        if args.only != "workloads":
            print("start-up ...", file=sys.stderr)
            ws = os.path.join(root, "startup")
            os.makedirs(ws)
            st = bench_startup(startup, variants, args.startup_rounds, env, ws)
            print(json.dumps(st, indent=1), file=sys.stderr)
        if args.only != "startup":
            print("workloads ...", file=sys.stderr)
            wl = bench_workloads(workloads(os.path.join(root, "w"), fsops), variants, args.rounds,
                                 env)
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
