#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""cordon benchmarks: cordond's warm sessions (BENCHMARKS.md, section "cordond").

  bench/daemon.py --cordon build/cordon [--cordond build/cordond] [--rounds 300]
                  [--sessions 100] [--execs 10] [--passes 3] [--write BENCHMARKS.md]
  bench/daemon.py --cordon build/cordon --idle-sessions 1000 [--idle-conns 16] [--rounds 300]

A fresh cordond is started on a socket in a private directory under --dir, with the built-in
default policy (workspace = the session's workdir, an empty $HOME). bench/daemonload.c is the
client (C, so the client's own cost stays far below the figures it measures; its floor is
measured too). In the same run:

(a) latency: one warm session; --rounds interleaved rounds (after --warmup untimed ones), the
    order rotated each round, each round running once: bare /bin/true (fork + exec + wait4 from
    the client), session.exec of /bin/true in the warm session, the same exec request against a
    trivial echo server (the client's and the socket's floor), session.list (a daemon round trip
    without a session host), cold `cordon run -- /bin/true`, and bubblewrap. Median, p90.
    Target (issue 5): warm median <= bare median + 1 ms. Where the time goes: when each event
    of the warm exec reached the client; `daemonload spawn` (fork + exec + waitpid of
    /bin/true) on the host and inside a warm session, in alternating runs (what the sandbox
    costs the command itself); and --cpu-execs warm execs back to back from an unmeasured
    client with each process's CPU time (schedstat; the commands through init's cutime).
(b) --sessions concurrent sessions, each on its own connection, each running --execs execs of
    /bin/true (one after the other, all sessions at once), then destroyed; the whole repeated
    --passes times on the same daemon. Errors counted by kind (target: zero). The daemon's open fds and
    VmRSS are sampled fresh, after (a), with all sessions idle, during the execs (the maximum of
    samples every 20 ms), after the execs, and after each pass's sessions are destroyed and
    their processes gone. Memory per idle warm session: each session's process tree
    (cordond-session, cordon-proxy, cordon-monitor, cordon-init) by VmRSS and by PSS (shared
    pages divided among the processes sharing them), plus the daemon's own growth per session.
    Bounds, after each pass: the daemon's fd count is exactly what it was after (a); its heap
    in use (glibc's malloc_stats(), called in the daemon with gdb) is at most 256 KiB above the
    figure after (a) (glibc's per-thread cache of freed chunks, counted as in use, holds up to
    235 KiB); and after the last pass, once malloc_trim(0) has given the free heap back, VmRSS is
    within 1 MiB of the fresh daemon's. Untrimmed VmRSS is reported as it is.

(c) --idle-sessions N (alone: (a) and (b) are not run): a second cordond gets N warm sessions,
    launched over --idle-conns connections (a daemon takes at most 256 clients, any number of
    sessions each) and then left idle. Their memory, from /proc/PID/smaps_rollup of every
    process of every session's tree (Rss, Pss and its anonymous part), the daemon's own growth
    and fds, and the kernel's (slab, stacks, page tables); then --rounds interleaved rounds of:
    bare /bin/true, a warm exec on the idle daemon (no other session), a warm exec on the
    loaded daemon (one more session beside the N idle ones), the echo floor and session.list.
    Target: warm exec at that load <= bare + 0.5 ms. Then all N are destroyed and every
    process of theirs must be gone. Printed only (--write does not take it).

With --write FILE the results replace the part of FILE between <!-- cordond:begin --> and
<!-- cordond:end -->.
"""
import argparse
import json
import os
import shutil
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import cpu_ticks, loadavg, machine, pct, write_section  # noqa: E402  (bench/run.py)

HERE = os.path.dirname(os.path.abspath(__file__))
BWRAP = ["--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/", "/",
         "--dev", "/dev", "--proc", "/proc", "/bin/true"]
# glibc's per-thread cache keeps up to 7 freed chunks of each of its 64 small sizes (32 to 1,040
# bytes): at most 7 × 34,304 bytes, which malloc_stats counts as in use. The bound on the heap in
# use after a pass is this much above the figure after the warm-exec measurements.
TCACHE_MAX = 7 * sum(range(32, 1041, 16))
HEAP_BOUND = 256 * 1024
TRIMMED_BOUND_KIB = 1024
SESSION_COMMS = ("cordond-session", "cordon-proxy", "cordon-monitor", "cordon-init")


def build(outdir):
    exe = os.path.join(outdir, "daemonload")
    subprocess.run(["cc", "-O2", "-std=gnu17", "-pthread", "-Wall", "-Wextra", "-Werror", "-o",
                    exe, os.path.join(HERE, "daemonload.c"), "-ljansson"], check=True)
    return exe


# ---- the machine's other work ----------------------------------------------------------------

def other_share(t0, t1, own0, own1):
    """The share of the machine's CPU time used by other work between two (cpu_ticks(),
    os.times()) samples: all busy time minus this benchmark's own (this script and the
    processes it reaped: the clients, cordond and, through it, the sessions)."""
    d = [b - a for a, b in zip(t0, t1)]
    hz = os.sysconf("SC_CLK_TCK")
    busy = (sum(d) - d[3] - d[4]) / hz
    own = sum(b - a for a, b in zip(own0[:4], own1[:4]))
    return max(0.0, busy - own) / max(1e-9, sum(d) / hz)


# ---- the daemon and its process tree ----------------------------------------------------------

class Daemon:
    def __init__(self, cordond, sock, env, logdir):
        self.out = open(os.path.join(logdir, "cordond.out"), "w+")
        self.err = open(os.path.join(logdir, "cordond.err"), "w+")
        self.p = subprocess.Popen([cordond, "--socket", sock], env=env, stdin=subprocess.DEVNULL,
                                  stdout=self.out, stderr=self.err)
        self.pid = self.p.pid
        for _ in range(500):
            if os.path.exists(sock):
                return
            if self.p.poll() is not None:
                break
            time.sleep(0.01)
        self.err.seek(0)
        raise SystemExit(f"cordond did not start: {self.err.read().strip()}")

    def gdb_call(self, expr):
        """Calls a function inside the daemon with gdb (glibc's allocator statistics); the
        daemon's stderr added by it, or None without gdb."""
        if not shutil.which("gdb"):
            return None
        self.err.seek(0, os.SEEK_END)
        off = self.err.tell()
        p = subprocess.run(["gdb", "-p", str(self.pid), "-batch", "-ex", f"call {expr}"],
                           capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            return None
        self.err.seek(off)
        return self.err.read()

    def heap_in_use(self):
        """Bytes of the daemon's heap in use (glibc malloc_stats, all arenas), or None."""
        text = self.gdb_call("(void) malloc_stats()")
        if not text or "Total (incl. mmap):" not in text:
            return None
        total = text.rsplit("Total (incl. mmap):", 1)[1]
        for line in total.splitlines():
            if line.strip().startswith("in use bytes"):
                return int(line.split("=")[1])
        return None

    def trimmed_rss(self):
        """VmRSS after malloc_trim(0): what is left once the free heap is given back."""
        if self.gdb_call("(int) malloc_trim(0)") is None:
            return None
        return status(self.pid)["VmRSS"]

    def banner(self):
        self.out.seek(0)
        return self.out.readline().strip()

    def stop(self):
        """SIGTERM; returns the processes of its tree still alive 2 s later (should be none)."""
        tree = descendants(self.pid)
        self.p.send_signal(signal.SIGTERM)
        try:
            self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        deadline = time.monotonic() + 2
        left = tree
        while left and time.monotonic() < deadline:
            left = [p for p in left if os.path.exists(f"/proc/{p}")]
            time.sleep(0.05)
        return left


def proc_table():
    """{pid: (ppid, comm)} for every process."""
    t = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        t[int(name)] = (int(stat[stat.rindex(")") + 2:].split()[1]), comm)
    return t


def descendants(pid, table=None):
    table = table or proc_table()
    kids = {}
    for p, (pp, _) in table.items():
        kids.setdefault(pp, []).append(p)
    out, todo = [], list(kids.get(pid, []))
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out


def status(pid):
    s = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "VmHWM"):
                    s[k] = int(v.split()[0])
        s["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None
    return s


SMAPS_KEYS = ("Rss", "Pss", "Pss_Anon", "Pss_File", "Pss_Shmem")


def smaps(pid):
    """{key: KiB} of /proc/PID/smaps_rollup for SMAPS_KEYS (all 0 once the process is gone)."""
    v = dict.fromkeys(SMAPS_KEYS, 0)
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                k, _, rest = line.partition(":")
                if k in v:
                    v[k] = int(rest.split()[0])
    except OSError:
        pass
    return v


def pss_kib(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


KERNEL_KEYS = ("SUnreclaim", "KernelStack", "PageTables")


def kernel_kib():
    """The kernel's unreclaimable slab, stacks and page tables (/proc/meminfo), in KiB: what
    processes, namespaces, sockets and pipes cost the kernel, approximately (the whole machine's
    figure: other work moves it too)."""
    v = {}
    with open("/proc/meminfo") as f:
        for line in f:
            k, _, rest = line.partition(":")
            if k in KERNEL_KEYS:
                v[k] = int(rest.split()[0])
    return sum(v.values())


def start_time(pid):
    """The process's start time (/proc/PID/stat field 22), which with the pid names one
    process; None once it is gone or a zombie (dead, waiting to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            st = f.read()
        fields = st[st.rindex(")") + 2:].split()
        return None if fields[0] in ("Z", "X") else int(fields[19])
    except (OSError, ValueError, IndexError):
        return None


def session_trees(daemon_pid):
    """Each session host (a child of the daemon) with its descendants: a list of
    {comm: (rss_kib, pss_kib)} per session, and every process seen as {(pid, start): comm}."""
    table = proc_table()
    trees, seen = [], {}
    for host in [p for p, (pp, _) in table.items() if pp == daemon_pid]:
        procs = {}
        for p in [host] + descendants(host, table):
            st = status(p)
            comm = table[p][1]
            if st:
                procs.setdefault(comm, []).append((st.get("VmRSS", 0), pss_kib(p)))
                seen[(p, start_time(p))] = comm
        trees.append(procs)
    return trees, seen


def survivors(seen):
    """The processes of `seen` still alive (same pid, same start time), which may have left the
    daemon's tree (reparented to PID 1): {comm: count}. They are killed (by pid: they are this
    benchmark's sessions' processes) so they do not pile up over the passes."""
    alive = [(pid, start) for pid, start in seen if start is not None]
    deadline = time.monotonic() + 2  # SIGKILL and namespace teardown are not instantaneous
    while alive and time.monotonic() < deadline:
        alive = [(pid, start) for pid, start in alive if start_time(pid) == start]
        time.sleep(0.05)
    left = {}
    for pid, start in alive:
        left[seen[(pid, start)]] = left.get(seen[(pid, start)], 0) + 1
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return left


def leftovers(root):
    """Processes still running whose command line names this run's directory (cordond's forks
    carry its --socket argument): {comm: count}; killed, by pid."""
    left = {}
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmd = f.read()
            with open(f"/proc/{name}/comm") as f:
                comm = f.read().strip()
        except OSError:
            continue
        if root.encode() + b"/" in cmd and start_time(int(name)) is not None:
            left[comm] = left.get(comm, 0) + 1
            try:
                os.kill(int(name), signal.SIGKILL)
            except OSError:
                pass
    return left


def wait_no_children(pid, timeout=15):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not descendants(pid):
            return True
        time.sleep(0.02)
    return False


class Sampler(threading.Thread):
    """The daemon's fds and VmRSS every 20 ms, and the number of processes in its tree every
    200 ms (a /proc scan costs more), until stopped: the maxima."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.stop_ev = pid, threading.Event()
        self.max = {"fds": 0, "VmRSS": 0, "procs": 0}

    def run(self):
        i = 0
        while not self.stop_ev.is_set():
            st = status(self.pid)
            if st:
                for k in ("fds", "VmRSS"):
                    self.max[k] = max(self.max[k], st[k])
            if i % 10 == 0:
                self.max["procs"] = max(self.max["procs"], len(descendants(self.pid)))
            i += 1
            self.stop_ev.wait(0.02)

    def finish(self):
        self.stop_ev.set()
        self.join()
        return self.max


# ---- (a) latency ---------------------------------------------------------------------------------

def bench_latency(exe, cordon, sock, ws, env, rounds, warmup):
    cmd = [exe, "latency", sock, ws, str(rounds), str(warmup),
           "cold", cordon, "run", "--", "/bin/true"]
    bwrap = shutil.which("bwrap")
    if bwrap:
        cmd += ["::", "bwrap", bwrap] + BWRAP
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ws)
    if p.returncode != 0:
        raise SystemExit(f"daemonload latency failed ({p.returncode}): {p.stderr.strip()}")
    res = {}
    for line in p.stdout.splitlines():
        d = json.loads(line)
        res[d["label"]] = summary(d)
    return res


def summary(d):
    s = {"runs": d["runs"], "failures": d["failures"], "median": statistics.median(d["ms"]),
         "p90": pct(d["ms"], 0.9), "min": min(d["ms"]), "mean": statistics.fmean(d["ms"])}
    if "marks" in d:
        s["marks"] = [statistics.median(m[k] for m in d["marks"]) for k in range(3)]
    return s


def bench_spawn(exe, cordon, sock, ws, env, n, chunks=6):
    """`daemonload spawn` on the host and as a command in a warm session (through the CLI):
    fork + exec + waitpid of /bin/true with and without the sandbox around the caller; n of
    each, in `chunks` alternating runs so that both see the same moments of the machine."""
    sid = subprocess.run([cordon, "session", "launch", "--socket", sock, "--workdir", ws],
                         capture_output=True, text=True, env=env, cwd=ws, check=True).stdout
    sid = sid.strip()
    runs = {"host": [], "session": []}
    try:
        for i in range(2 * chunks):
            where = ("host", "session")[(i + i // 2) % 2]  # host, session, session, host, ...
            cmd = [exe, "spawn", str(n // chunks)]
            if where == "session":
                cmd = [cordon, "exec", "--socket", sock, sid, "--"] + cmd
            p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ws)
            if p.returncode != 0:
                raise SystemExit(f"{cmd}: exit {p.returncode}: {p.stderr.strip()}")
            d = json.loads(p.stdout)
            if d["failures"]:
                raise SystemExit(f"{cmd}: {d['failures']} failures")
            runs[where] += d["ms"]
    finally:
        subprocess.run([cordon, "session", "destroy", "--socket", sock, sid], env=env,
                       stdout=subprocess.DEVNULL, check=False)
    return {k: summary({"runs": len(v), "failures": 0, "ms": v}) for k, v in runs.items()}


def cpu_ns(pid):
    """On-CPU time of every thread of pid (schedstat, ns), and of its reaped children (ns, from
    /proc/PID/stat's cutime + cstime, in clock ticks)."""
    own = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                own += int(f.read().split()[0])
        except OSError:
            pass
    with open(f"/proc/{pid}/stat") as f:
        st = f.read()
    fields = st[st.rindex(")") + 2:].split()
    hz = os.sysconf("SC_CLK_TCK")
    return own, (int(fields[13]) + int(fields[14])) * 1_000_000_000 // hz


def exec_loop(sock, sid, n):
    """n session.exec of /bin/true, one after the other, from this (unmeasured) process."""
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    f = s.makefile("rb")
    for i in range(1, n + 1):
        s.sendall((json.dumps({"v": 1, "id": i, "method": "session.exec", "params": {
            "sessionId": sid, "argv": ["/bin/true"]}}) + "\n").encode())
        while True:
            d = json.loads(f.readline())
            if d.get("id") == i and ("result" in d or "error" in d):
                break
        if d.get("result", {}).get("exitCode") != 0:
            raise SystemExit(f"cpu: exec {i} failed: {d}")
    s.close()


def bench_cpu(exe, dmn, cordon, sock, ws, env, n):
    """CPU time per warm exec in each process involved, against a bare fork + exec + wait."""
    sid = subprocess.run([cordon, "session", "launch", "--socket", sock, "--workdir", ws],
                         capture_output=True, text=True, env=env, cwd=ws, check=True).stdout
    sid = sid.strip()
    try:
        table = proc_table()
        procs = {"cordond": [dmn.pid]}
        for p in descendants(dmn.pid, table):
            procs.setdefault(table[p][1], []).append(p)
        exec_loop(sock, sid, 20)  # warm-up
        before = {c: [cpu_ns(p) for p in ps] for c, ps in procs.items()}
        exec_loop(sock, sid, n)
        after = {c: [cpu_ns(p) for p in ps] for c, ps in procs.items()}
    finally:
        subprocess.run([cordon, "session", "destroy", "--socket", sock, sid], env=env,
                       stdout=subprocess.DEVNULL, check=False)
    res = {}
    for c in procs:
        res[c] = sum(a[0] - b[0] for a, b in zip(after[c], before[c])) / n / 1e6
        if c == "cordon-init":  # its reaped children: the commands
            res["command"] = sum(a[1] - b[1] for a, b in zip(after[c], before[c])) / n / 1e6
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([exe, "spawn", str(n)], env=env, cwd=ws, check=True,
                   stdout=subprocess.DEVNULL)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    res["bare"] = ((r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)) / (n + 10) * 1e3
    res["n"] = n
    return res


# ---- (b) concurrent sessions ----------------------------------------------------------------------

def read_phase(p, name):
    line = p.stdout.readline()
    if not line:
        raise SystemExit(f"daemonload concurrent ended before phase {name}: "
                         f"{p.stderr.read().strip()}")
    d = json.loads(line)
    if d["phase"] != name:
        raise SystemExit(f"daemonload concurrent: expected phase {name}, got {d}")
    return d


def per_session(trees):
    """Per-session totals (RSS and PSS sums of the tree) and which processes a tree holds."""
    rss = [sum(r for v in t.values() for r, _ in v) for t in trees]
    pss = [sum(p for v in t.values() for _, p in v) for t in trees]
    comms = {}
    for t in trees:
        for c, v in t.items():
            comms.setdefault(c, []).extend(v)
    return rss, pss, comms


def concurrent_pass(exe, dmn, sock, ws, env, n, execs):
    p = subprocess.Popen([exe, "concurrent", sock, ws, str(n), str(execs)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ws)
    res = {"before": status(dmn.pid), "kernel_before": kernel_kib()}
    res["launched"] = read_phase(p, "launched")
    time.sleep(0.5)  # idle: let each session settle after its launch
    res["idle"] = status(dmn.pid)
    res["kernel_idle"] = kernel_kib()
    res["trees"], seen = session_trees(dmn.pid)
    sampler = Sampler(dmn.pid)
    sampler.start()
    p.stdin.write("go\n")
    p.stdin.flush()
    res["execs"] = read_phase(p, "execs")
    res["during"] = sampler.finish()
    res["after_execs"] = status(dmn.pid)
    p.stdin.write("go\n")
    p.stdin.flush()
    res["destroyed"] = read_phase(p, "destroyed")
    p.stdin.close()
    p.wait()
    res["gone"] = wait_no_children(dmn.pid)
    time.sleep(0.2)
    res["left"] = survivors(seen)
    res["after"] = status(dmn.pid)
    res["heap"] = dmn.heap_in_use()
    return res


# ---- (c) many idle sessions ----------------------------------------------------------------------

def idle_trees(daemon_pid):
    """Each session host's tree: {comm: [smaps dict, ...]} per session."""
    table = proc_table()
    trees = []
    for host in [p for p, (pp, _) in table.items() if pp == daemon_pid]:
        procs = {}
        for p in [host] + descendants(host, table):
            procs.setdefault(table[p][1], []).append(smaps(p))
        trees.append(procs)
    return trees


F_GETPIPE_SZ = 1032


def pipe_pages(pids):
    """The capacity of every pipe the processes hold, each pipe once, in pages (what the kernel
    charges to their user against fs.pipe-user-pages-soft), through a second read-only open of
    it (nothing is read)."""
    import fcntl
    seen, total = set(), 0
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                t = os.readlink(f"/proc/{pid}/fd/{fd}")
                if not t.startswith("pipe:") or t in seen:
                    continue
                seen.add(t)
                f = os.open(f"/proc/{pid}/fd/{fd}", os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                total += fcntl.fcntl(f, F_GETPIPE_SZ) // 4096
            finally:
                os.close(f)
    return total, len(seen)


def bench_idle(exe, cordond, root, env, ws, sock, n, conns, rounds, warmup):
    """(c): a second daemon with n idle warm sessions; the warm exec there against the idle
    daemon at `sock`, interleaved."""
    logdir = os.path.join(root, "loaded")
    os.makedirs(logdir, mode=0o700)
    sock2 = os.path.join(logdir, "d.sock")
    d2 = Daemon(cordond, sock2, env, logdir)
    try:
        time.sleep(0.2)
        res = {"fresh": status(d2.pid), "kernel_before": kernel_kib(), "n": n, "conns": conns}
        p = subprocess.Popen([exe, "idle", sock2, ws, str(n), str(conns)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                             cwd=ws)
        print(f"launching {n} idle sessions ...", file=sys.stderr)
        res["launched"] = read_phase(p, "launched")
        time.sleep(1.0)  # let each session settle after its launch
        res["idle"] = status(d2.pid)
        res["idle"]["smaps"] = smaps(d2.pid)
        res["kernel_idle"] = kernel_kib()
        res["trees"] = idle_trees(d2.pid)
        res["procs"] = len(descendants(d2.pid))
        res["pipes"] = pipe_pages(descendants(d2.pid))
        res["threads"] = sum(len(os.listdir(f"/proc/{q}/task")) for q in descendants(d2.pid)
                             if os.path.exists(f"/proc/{q}/task"))
        print("latency at that load ...", file=sys.stderr)
        cmd = [exe, "latency", sock, ws, str(rounds), str(warmup), "loaded", "@" + sock2]
        q = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ws)
        if q.returncode != 0:
            raise SystemExit(f"daemonload latency failed ({q.returncode}): {q.stderr.strip()}")
        res["lat"] = {d["label"]: summary(d) for d in map(json.loads, q.stdout.splitlines())}
        p.stdin.write("go\n")
        p.stdin.flush()
        res["destroyed"] = read_phase(p, "destroyed")
        p.stdin.close()
        p.wait()
        res["gone"] = wait_no_children(d2.pid, timeout=120)
        time.sleep(0.2)
        res["after"] = status(d2.pid)
    finally:
        left = d2.stop()
    res["left"] = left
    return res


def pipe_soft():
    with open("/proc/sys/fs/pipe-user-pages-soft") as f:
        return int(f.read())


def report_idle(out, r):
    n, la = r["n"], r["launched"]
    errs = sum(la["errors"].values())
    out += [f"### {n:,} idle warm sessions on one daemon", "",
            f"Launched over {r['conns']} connections in {la['wall_ms'] / 1000:.1f} s (one launch: "
            f"median {statistics.median(la['ms']):.0f} ms, max {max(la['ms']):.0f} ms); "
            f"**{errs} errors**" + (f" (first: {la['first_error']})" if errs else "") +
            f"; {r['procs']:,} processes ({r['threads']:,} threads) under the daemon.", "",
            "| process | count | Rss (median) | Pss (median) | of it anonymous (median) |",
            "|---|---|---|---|---|"]
    comms, per_rss, per_pss, per_anon = {}, [], [], []
    for t in r["trees"]:
        per_rss.append(sum(v["Rss"] for vs in t.values() for v in vs))
        per_pss.append(sum(v["Pss"] for vs in t.values() for v in vs))
        per_anon.append(sum(v["Pss_Anon"] for vs in t.values() for v in vs))
        for c, vs in t.items():
            comms.setdefault(c, []).extend(vs)
    for c in SESSION_COMMS + tuple(sorted(set(comms) - set(SESSION_COMMS))):
        if c in comms:
            v = comms[c]
            out.append(f"| `{c}` | {len(v):,} | {kib(statistics.median(x['Rss'] for x in v))} | "
                       f"{kib(statistics.median(x['Pss'] for x in v))} | "
                       f"{kib(statistics.median(x['Pss_Anon'] for x in v))} |")
    fresh, idle = r["fresh"], r["idle"]
    grow = (idle["VmRSS"] - fresh["VmRSS"]) / n
    kern = (r["kernel_idle"] - r["kernel_before"]) / n
    pss = statistics.median(per_pss) if per_pss else 0
    out += [f"| the daemon's growth per session (VmRSS) | – | {kib(grow)} | – | – |", "",
            f"- per session, Pss summed over its processes: **{kib(pss)}** median "
            f"(Rss summed: {kib(statistics.median(per_rss) if per_rss else 0)}, which counts "
            f"the shared pages once per process; anonymous: "
            f"{kib(statistics.median(per_anon) if per_anon else 0)})",
            f"- kernel memory per session (unreclaimable slab + kernel stacks + page tables, "
            f"`/proc/meminfo`, the whole machine's, so approximate): {kib(kern)}",
            f"- in all, per session: **{kib(pss + grow + kern)}**; {n:,} sessions: "
            f"{kib(n * (pss + grow + kern))}",
            f"- the daemon: {fresh['fds']} fds and {kib(fresh['VmRSS'])} fresh, {idle['fds']:,} "
            f"fds and {kib(idle['VmRSS'])} with the sessions idle "
            f"({(idle['fds'] - fresh['fds']) / n:.1f} fds per session); after destroying them: "
            f"{r['after']['fds']} fds, {kib(r['after']['VmRSS'])}",
            (f"- pipes held by the sessions' processes: {r['pipes'][1]:,} pipes, "
             f"{r['pipes'][0]:,} pages of capacity ({r['pipes'][0] / n:.0f} per session), "
             f"against the user's budget fs.pipe-user-pages-soft = {pipe_soft():,} pages"
             if r["pipes"][1] else "- pipes held by the sessions' processes: not readable "
             "(their /proc/PID/fd is closed to this benchmark)"),
            f"- every session's process gone after `session.destroy`: "
            f"{verdict(r['gone'] and not r['left'])}", ""]
    lat = r["lat"]
    out += [f"Warm exec against the load ({lat['bare']['runs']} interleaved rounds):", "",
            "| command | median | p90 | failures |", "|---|---|---|---|"]
    rows = [("bare", "bare `/bin/true`"), ("warm", "warm exec, idle daemon (no other session)"),
            ("loaded", f"warm exec, daemon with {n:,} idle sessions"),
            ("echo", "echo floor"), ("list", "`session.list`, idle daemon")]
    for k, name in rows:
        s = lat[k]
        out.append(f"| {name} | {s['median']:.3f} ms | {s['p90']:.3f} ms | {s['failures']} |")
    b = lat["bare"]["median"]
    d_idle, d_load = lat["warm"]["median"] - b, lat["loaded"]["median"] - b
    out += ["", f"- warm − bare: idle daemon **{d_idle:+.3f} ms**, with {n:,} idle sessions "
            f"**{d_load:+.3f} ms** (the load adds {d_load - d_idle:+.3f} ms) — target ≤ +0.5 ms: "
            f"idle {verdict(d_idle <= 0.5)}, loaded {verdict(d_load <= 0.5)}", ""]


def report_idle_only(m, load, args, r):
    out = [f"Measured {m['date']} on {m['nproc']} CPUs ({m['cpu']}), kernel {m['kernel']}, "
           f"{m['cordon']} at commit {m['commit']}, as uid {m['uid']}. Other work on the "
           f"machine: 1-minute load average {load[0]:.2f} at the start and {load[1]:.2f} at the "
           f"end; other processes used {100 * load[2]:.0f}% of the CPU time during the run.", "",
           f"Command: `{args.command_line}`", ""]
    report_idle(out, r)
    return "\n".join(out).rstrip("\n") + "\n"


# ---- report ----------------------------------------------------------------------------------------

def verdict(ok):
    return "met" if ok else "**NOT met**"


LABELS = [
    ("bare", "bare `/bin/true` (fork + exec + waitpid in the client)"),
    ("warm", "`session.exec` of `/bin/true` in a warm session"),
    ("echo", "the same request to a trivial echo server (client floor)"),
    ("list", "`session.list` (daemon round trip, no session host)"),
    ("cold", "cold `cordon run -- /bin/true`"),
    ("bwrap", "`bwrap --unshare-all ... /bin/true`"),
]


def report_latency(out, lat, rounds, warmup):
    out += [f"### Warm exec ({rounds} interleaved rounds after {warmup} untimed ones)", "",
            "| command | median | p90 | min | mean | failures |", "|---|---|---|---|---|---|"]
    for k, name in LABELS:
        if k in lat:
            s = lat[k]
            out.append(f"| {name} | {s['median']:.3f} ms | {s['p90']:.3f} ms | {s['min']:.3f} ms "
                       f"| {s['mean']:.3f} ms | {s['failures']} |")
    w, b = lat["warm"], lat["bare"]
    d = w["median"] - b["median"]
    out += ["", f"- warm − bare (median): **+{d:.3f} ms** — target ≤ +1 ms: {verdict(d <= 1.0)}",
            f"- warm − bare (p90): +{w['p90'] - b['p90']:.3f} ms",
            f"- the client's own floor (echo): {lat['echo']['median']:.3f} ms median, "
            f"{100 * lat['echo']['median'] / w['median']:.0f}% of the warm figure",
            f"- cold `cordon run` / warm exec (median): {lat['cold']['median'] / w['median']:.1f}×",
            ""]


def report_breakdown(out, lat, spawn, n):
    w, b, e = lat["warm"], lat["bare"], lat["echo"]
    mk = w["marks"]
    sh, ss = spawn["host"], spawn["session"]
    confine = ss["median"] - sh["median"]
    plumbing = (w["median"] - b["median"]) - confine
    out += ["Where a warm exec's time goes. Medians over the same rounds, of the time from "
            "writing the request to the arrival of each line at the client:", "",
            "| line | arrives after | since the previous line |", "|---|---|---|"]
    prev = 0.0
    for name, t in (("`starting` event (daemon → session host, request parsed)", mk[0]),
                    ("`ready` event (pipes made, command handed to the session's init)", mk[1]),
                    ("`exit` event (init forked, command ran and exited, init reaped it)", mk[2]),
                    ("response", w["median"])):
        out.append(f"| {name} | {t:.3f} ms | +{t - prev:.3f} ms |")
        prev = t
    out += ["", f"And what the sandbox costs the command itself: `daemonload spawn` (fork + exec + "
            f"waitpid of `/bin/true` in a tight loop, {spawn['host']['runs']} times each, in "
            f"alternating runs) on the host and as a command in a warm session:", "",
            "| where | median | p90 |", "|---|---|---|",
            f"| on the host | {sh['median']:.3f} ms | {sh['p90']:.3f} ms |",
            f"| inside a warm session (namespaces, Landlock, seccomp) | {ss['median']:.3f} ms | "
            f"{ss['p90']:.3f} ms |", "",
            f"- of warm − bare (+{w['median'] - b['median']:.3f} ms): the confinement's cost on the "
            f"command's own fork + exec: {confine:+.3f} ms; the rest, {plumbing:+.3f} ms, is the "
            f"daemon, the session host and init relaying the exec (the client's floor, echo, "
            f"is {e['median']:.3f} ms of it)", ""]
    report_cpu(out, spawn["cpu"])


CPU_ROWS = [
    ("cordond", "`cordond` (the daemon: request, relaying four lines)"),
    ("cordond-session", "`cordond-session` (the session host: pipes, events, result)"),
    ("cordon-init", "`cordon-init` (fork, hand-over, reaping)"),
    ("command", "the command, `/bin/true`, inside the sandbox (init's reaped children)"),
    ("cordon-monitor", "`cordon-monitor` (the creation-rule supervisor)"),
    ("cordon-proxy", "`cordon-proxy`"),
]


def report_cpu(out, c):
    out += [f"CPU time per exec, by process: {c['n']} warm execs of `/bin/true` one after the "
            f"other (from a client that is not measured), each process's on-CPU time "
            f"(`/proc/PID/task/*/schedstat`; the commands from init's `cutime` + `cstime`), "
            f"divided by {c['n']}; CPU time, unlike wall time, hardly moves with other work on "
            f"the machine:", "", "| process | CPU per exec |", "|---|---|"]
    total = 0.0
    for k, name in CPU_ROWS:
        if k in c:
            total += c[k]
            out.append(f"| {name} | {c[k]:.3f} ms |")
    out += [f"| **total** | **{total:.3f} ms** |",
            f"| bare: `daemonload spawn` (fork + exec + waitpid) and its `/bin/true`, per spawn "
            f"| {c['bare']:.3f} ms |", ""]


def kib(v):
    return f"{v / 1024:.1f} MiB" if v >= 10240 else f"{round(v):,} KiB"


def report_concurrent(out, base, after_lat, passes, n, execs, trimmed):
    np = len(passes)
    out += [f"### {n} concurrent sessions × {execs} execs ({np} pass{'es' if np > 1 else ''} on "
            f"one daemon)", "",
            "| pass | launch (median / max) | execs: wall | exec latency (median / p90 / max) "
            "| errors |", "|---|---|---|---|---|"]
    for i, r in enumerate(passes, 1):
        la, ex = r["launched"], r["execs"]
        errs = sum(r["destroyed"]["errors"].values())  # the counts are cumulative
        ms = ex["ms"]
        lat = (f"{statistics.median(ms):.2f} / {pct(ms, 0.9):.2f} / {max(ms):.2f} ms"
               if ms else "–")
        kinds = ", ".join(f"{k} {v}" for k, v in r["destroyed"]["errors"].items() if v)
        first = f" ({kinds}; first: {r['destroyed']['first_error']})" if errs else ""
        out.append(f"| {i} | {statistics.median(la['ms']):.0f} / {max(la['ms']):.0f} ms | "
                   f"{ex['wall_ms'] / 1000:.2f} s for {len(ms)} execs | {lat} | "
                   f"**{errs}**{first} |")
    total = sum(len(r["execs"]["ms"]) for r in passes)
    errors = sum(sum(r["destroyed"]["errors"].values()) for r in passes)
    out += ["", f"- {total} execs completed, **{errors} errors** — target: zero errors: "
            f"{verdict(errors == 0 and total == n * execs * len(passes))}", ""]
    report_daemon(out, base, after_lat, passes, n, trimmed)
    report_memory(out, passes[0], after_lat, n)


def heap(v):
    return "–" if v is None else f"{v:,} B"


def report_daemon(out, base, after_lat, passes, n, trimmed):
    out += ["The daemon process (`cordond`); heap in use is glibc's `malloc_stats()`, called in "
            "the daemon with gdb:", "",
            "| when | open fds | VmRSS | heap in use |", "|---|---|---|---|",
            f"| fresh | {base['fds']} | {kib(base['VmRSS'])} | – |",
            f"| after the warm-exec measurements (3 sessions launched, used, destroyed) | "
            f"{after_lat['fds']} | {kib(after_lat['VmRSS'])} | {heap(after_lat['heap'])} |"]
    for i, r in enumerate(passes, 1):
        out += [f"| pass {i}: {n} sessions idle | {r['idle']['fds']} | {kib(r['idle']['VmRSS'])} "
                f"| |",
                f"| pass {i}: during the execs (max) | {r['during']['fds']} | "
                f"{kib(r['during']['VmRSS'])} | |",
                f"| pass {i}: after the execs | {r['after_execs']['fds']} | "
                f"{kib(r['after_execs']['VmRSS'])} | |",
                f"| pass {i}: sessions destroyed, their processes gone | {r['after']['fds']} | "
                f"{kib(r['after']['VmRSS'])} | {heap(r['heap'])} |"]
    if trimmed is not None:
        out.append(f"| after the last pass and `malloc_trim(0)` | {passes[-1]['after']['fds']} | "
                   f"{kib(trimmed)} | |")
    fds_ok = all(r["after"]["fds"] == after_lat["fds"] for r in passes)
    out += ["", f"- fds after every pass = fds after the warm-exec measurements "
            f"({after_lat['fds']}): {verdict(fds_ok)}"]
    left = {}
    for r in passes:
        for c, k in r["left"].items():
            left[c] = left.get(c, 0) + k
    gone = all(r["gone"] for r in passes) and not left
    what = ", ".join(f"{k} × `{c}`" for c, k in sorted(left.items()))
    out.append(f"- every process of every destroyed session gone (checked by pid and start "
               f"time, so one that left the daemon's tree counts too): {verdict(gone)}"
               + (f" — still running after the passes' `session.destroy`: {what} (reparented "
                  f"away from the daemon; the benchmark killed them)" if left else ""))
    if after_lat["heap"] is not None and all(r["heap"] is not None for r in passes):
        worst = max(r["heap"] for r in passes) - after_lat["heap"]
        out.append(f"- heap in use after a pass − after the warm-exec measurements: at most "
                   f"{worst:+,} B — bound ≤ +{HEAP_BOUND:,} B (glibc's per-thread cache of "
                   f"freed chunks, counted as in use, holds up to {TCACHE_MAX:,} B): "
                   f"{verdict(worst <= HEAP_BOUND)}")
    else:
        out.append("- heap in use: not measured (gdb missing or could not attach)")
    if trimmed is not None:
        out.append(f"- VmRSS once the free heap is given back (`malloc_trim(0)`) − fresh: "
                   f"{trimmed - base['VmRSS']:+,} KiB — bound ≤ +{TRIMMED_BOUND_KIB:,} KiB: "
                   f"{verdict(trimmed - base['VmRSS'] <= TRIMMED_BOUND_KIB)}")
    out.append(f"- VmRSS after the last pass − fresh, untrimmed: "
               f"{passes[-1]['after']['VmRSS'] - base['VmRSS']:+,} KiB: freed heap that glibc "
               f"keeps resident (it returns only the top of the heap to the system by itself)")
    out.append("")


def report_memory(out, r, after_lat, n):
    rss, pss, comms = per_session(r["trees"])
    per_daemon = (r["idle"]["VmRSS"] - after_lat["VmRSS"]) / n
    out += [f"Memory per idle warm session (pass 1, {len(rss)} session trees found under the "
            f"daemon, sampled 0.5 s after the last launch):", "",
            "| process | count | VmRSS (median) | PSS (median) |", "|---|---|---|---|"]
    for c in SESSION_COMMS + tuple(sorted(set(comms) - set(SESSION_COMMS))):
        if c in comms:
            v = comms[c]
            out.append(f"| `{c}` | {len(v)} | {kib(statistics.median(x for x, _ in v))} | "
                       f"{kib(statistics.median(y for _, y in v))} |")
    out += [f"| the daemon's growth per session | – | {kib(round(per_daemon))} | – |", "",
            f"- per session, VmRSS summed over its processes: **{kib(statistics.median(rss))}** "
            f"median (min {kib(min(rss))}, max {kib(max(rss))}); the sum counts shared pages "
            f"(libc, the cordon binary) once per process",
            f"- per session, PSS summed: **{kib(statistics.median(pss))}** median: what each "
            f"session adds to the machine",
            f"- {n} idle sessions in all: {kib(sum(pss))} PSS + the daemon's "
            f"{kib(r['idle']['VmRSS'])}",
            f"- kernel memory (unreclaimable slab + kernel stacks + page tables, "
            f"`/proc/meminfo`, the whole machine's, so approximate): "
            f"{kib((r['kernel_idle'] - r['kernel_before']) / n)} per session", ""]


def report(m, load, banner, args, lat, spawn, base, after_lat, passes, trimmed, stray):
    out = [f"Measured {m['date']} on {m['nproc']} CPUs ({m['cpu']}), kernel {m['kernel']}, "
           f"{m['cordon']} at commit {m['commit']}, as uid {m['uid']}. Other work on the "
           f"machine: 1-minute load average {load[0]:.2f} at the start and {load[1]:.2f} at the "
           f"end; other processes used {100 * load[2]:.0f}% of the CPU time during the run.", "",
           f"Command: `{args.command_line}`", "", f"Daemon: `{banner}`", ""]
    report_latency(out, lat, args.rounds, args.warmup)
    report_breakdown(out, lat, spawn, args.rounds)
    report_concurrent(out, base, after_lat, passes, args.sessions, args.execs, trimmed)
    what = ", ".join(f"{k} × `{c}`" for c, k in sorted(stray.items()))
    out += [f"After the daemon's SIGTERM, processes of this run still running anywhere on the "
            f"machine (found by the run's directory in their command line): "
            f"{what + ' (killed by the benchmark)' if stray else 'none'} — target: none: "
            f"{verdict(not stray)}", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def write_md(path, text):
    write_section(path, text, "cordond")

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cordon", required=True)
    ap.add_argument("--cordond", help="default: cordond next to --cordon")
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--sessions", type=int, default=100)
    ap.add_argument("--execs", type=int, default=10)
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--cpu-execs", type=int, default=1000)
    ap.add_argument("--idle-sessions", type=int, default=0,
                    help="run only (c): this many idle sessions on a second daemon")
    ap.add_argument("--idle-conns", type=int, default=16)
    ap.add_argument("--dir", default="/var/tmp")
    ap.add_argument("--write", metavar="FILE", help="update the cordond section of FILE")
    args = ap.parse_args()
    args.command_line = " ".join(["bench/daemon.py"] + sys.argv[1:])
    cordon = os.path.abspath(args.cordon)
    cordond = os.path.abspath(args.cordond or os.path.join(os.path.dirname(cordon), "cordond"))
    root = tempfile.mkdtemp(prefix="cordon-bench-d.", dir=args.dir)
    dmn = None
    try:
        home, ws, sockdir = (os.path.join(root, d) for d in ("home", "ws", "run"))
        for d in (home, ws):
            os.makedirs(d)
        os.makedirs(sockdir, mode=0o700)
        sock = os.path.join(sockdir, "d.sock")
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "LC_ALL": "C"}
        exe = build(root)
        m, load0, ticks0, own0 = machine(cordon), loadavg(), cpu_ticks(), os.times()
        dmn = Daemon(cordond, sock, env, root)
        time.sleep(0.2)
        base = status(dmn.pid)
        if args.idle_sessions:
            r = bench_idle(exe, cordond, root, env, ws, sock, args.idle_sessions,
                           args.idle_conns, args.rounds, args.warmup)
            dmn.stop()
            dmn = None
            load = (load0, loadavg(), other_share(ticks0, cpu_ticks(), own0, os.times()))
            print(report_idle_only(m, load, args, r))
            return
        print("latency ...", file=sys.stderr)
        lat = bench_latency(exe, cordon, sock, ws, env, args.rounds, args.warmup)
        spawn = bench_spawn(exe, cordon, sock, ws, env, args.rounds)
        spawn["cpu"] = bench_cpu(exe, dmn, cordon, sock, ws, env, args.cpu_execs)
        wait_no_children(dmn.pid)
        wait_no_children(dmn.pid)
        time.sleep(0.2)
        after_lat = status(dmn.pid)
        after_lat["heap"] = dmn.heap_in_use()
        passes = []
        for i in range(args.passes):
            print(f"concurrent sessions, pass {i + 1} ...", file=sys.stderr)
            passes.append(concurrent_pass(exe, dmn, sock, ws, env, args.sessions, args.execs))
        trimmed = dmn.trimmed_rss()
        banner = dmn.banner()
        left = dmn.stop()
        dmn = None
        load = (load0, loadavg(), other_share(ticks0, cpu_ticks(), own0, os.times()))
        if left:
            raise SystemExit(f"processes left after cordond's SIGTERM: {left}")
        time.sleep(0.5)
        stray = leftovers(root)
        text = report(m, load, banner, args, lat, spawn, base, after_lat, passes, trimmed, stray)
        print(text)
        if args.write:
            write_md(args.write, text)
    finally:
        if dmn:  # an error mid-run: nothing of this run may keep running
            dmn.stop()
            leftovers(root)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
