#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""cordon benchmarks: the egress proxy (BENCHMARKS.md, section "Egress proxy").

  bench/net.py --cordon build/cordon [--rounds 15] [--size-mib 200] [--conns 300]
               [--tunnels 1000] [--payload 16384] [--write BENCHMARKS.md]

Everything runs on loopback: bench/netload.c's server listens on 127.0.0.1 (an ephemeral port) in
the host's network namespace; the client is the same program, run either bare on the host
("direct") or as the command of `cordon run --allow-domain 127.0.0.1:PORT --`, where the only
way out is cordon's proxy (HTTP on 127.0.0.1:3128, SOCKS5 on 127.0.0.1:1080 inside the sandbox's
network namespace, taken from $HTTP_PROXY / $ALL_PROXY). In the same run:

(a) throughput: one download of --size-mib MiB per run, direct vs through a CONNECT tunnel, a
    SOCKS5 tunnel, an absolute-form GET (HTTP forwarding) and a plain client that connects by
    name with no proxy variables ("named": the sandbox's resolver and the kernel's redirection
    to the proxy, docs/design/network.md "Every TCP client"); for reference also through
    netload's minimal splice relay on the host (one extra TCP hop, no sandbox, no policy: the
    floor of any proxy in the path). One verified warm-up run per path (every byte checked),
    then --rounds timed runs, the order rotated each round; medians. The time is the client's
    own, from connect() to the last byte (cordon's start-up is not in it).
    The "ruled" path is the HTTP forward path with egressRules on the server's address: every
    request passes the request-rule hook (src/net/proxy-request.c).
(b) latency of a new connection: --conns fresh connections per path (3 rounds of conns/3, the
    order rotated, 10 untimed warm-up connections each), each timed from socket() to the first
    byte of a tiny answer (proxy handshake included); median and p90, and the difference to
    direct.
(c) --tunnels concurrent tunnels through one session's proxy (CONNECT, then SOCKS5): all opened
    at once, held open, then --payload bytes echoed through every one and checked byte for
    byte; errors counted. The proxy process (`cordon-proxy`, a child of `cordon`) is sampled
    before, with all tunnels open, and after the echo: VmRSS, VmHWM, open fds, and the
    capacity of its pipes (what the kernel charges to the proxy's user, whose budget
    fs.pipe-user-pages-soft is shared by every session's proxy). While the CONNECT tunnels are
    open, --busy-rounds downloads run in another session, to show whether one session's
    connections slow down the others.

With --write FILE the results replace the part of FILE between <!-- egress:begin --> and
<!-- egress:end -->.
"""
import argparse
import fcntl
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import cpu_ticks, loadavg, machine, pct, write_section  # noqa: E402  (bench/run.py)

HERE = os.path.dirname(os.path.abspath(__file__))
VIAS = ("direct", "connect", "socks", "forward", "ruled", "named")   # latency
TVIAS = ("direct", "relay", "connect", "socks", "forward", "ruled", "named")  # throughput
NAME = "bench.test"  # the server's name for the intercepted path (mapped to 127.0.0.1 outside)
F_GETPIPE_SZ = 1032
LABEL = {
    "direct": "direct (host, no sandbox)",
    "relay": "reference: minimal splice relay (host, no sandbox)",
    "connect": "CONNECT tunnel (in sandbox)",
    "socks": "SOCKS5 tunnel (in sandbox)",
    "forward": "HTTP forward, absolute-form GET (in sandbox)",
    "named": "plain client by name, intercepted (in sandbox, no proxy variables)",
    "ruled": "HTTP forward to a host with request rules (in sandbox, every request judged)",
}
# The "ruled" path: the forward path with egressRules on the server's address, so every
# request passes the request-rule hook (src/net/proxy-request.c): two rules, the allow one
# matched after a deny rule that does not match, as a policy would have them.
RULES = {"egressRules": [
    {"host": "127.0.0.1", "methods": ["POST", "PUT", "DELETE"], "paths": ["/admin/*"],
     "action": "deny", "reason": "no admin writes"},
    {"host": "127.0.0.1", "methods": ["GET", "HEAD"], "paths": ["/*"], "action": "allow"}]}


def build(outdir):
    exe = os.path.join(outdir, "netload")
    subprocess.run(["cc", "-O2", "-std=gnu17", "-pthread", "-Wall", "-Wextra", "-Werror", "-o",
                    exe, os.path.join(HERE, "netload.c"), os.path.join(HERE, "netserve.c")],
                   check=True)
    return exe


class Server:
    """`netload serve` or `netload relay HOST:PORT`: 127.0.0.1, an ephemeral port; exits when
    its stdin closes."""

    def __init__(self, exe, *args):
        self.p = subprocess.Popen([exe] + list(args), stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        line = self.p.stdout.readline().split()
        if len(line) != 2 or line[0] != "port":
            raise SystemExit(f"netload {args}: unexpected {line!r}")
        self.hostport = f"127.0.0.1:{line[1]}"

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=10)


class Runner:
    def __init__(self, exe, cordon, hostport, relay, cwd, env):
        self.exe, self.cordon, self.hostport, self.cwd, self.env = exe, cordon, hostport, cwd, env
        self.relay = relay

    def argv(self, via, *args):
        if via == "relay":
            return [self.exe, args[0], "direct", self.relay] + [str(a) for a in args[1:]]
        port = self.hostport.rsplit(":", 1)[1]
        target = f"{NAME}:{port}" if via == "named" else self.hostport
        mode = "forward" if via == "ruled" else via
        cmd = [self.exe, args[0], mode, target] + [str(a) for a in args[1:]]
        if via == "direct":
            return cmd
        # The one explicit entry that lets the proxy reach the local server
        # (docs/design/network.md); the intercepted client asks the sandbox's resolver for a
        # name the proxy maps to that server (--resolve).
        named = ["--allow-domain", target, "--resolve", f"{NAME}=127.0.0.1"] if via == "named" else []
        if via == "ruled":
            named = ["--policy", os.path.join(self.cwd, "rules.json")]
        return [self.cordon, "run", "--allow-domain", self.hostport] + named + ["--"] + cmd

    def json(self, via, *args):
        p = subprocess.run(self.argv(via, *args), cwd=self.cwd, env=self.env,
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"{via} {args}: exit {p.returncode}: {p.stdout[-300:]} "
                               f"{p.stderr.strip()[-500:]}")
        return json.loads(p.stdout.strip().splitlines()[-1])


def other_share(t0, t1, own0, own1):
    """The share of the machine's CPU time used by other work between two (cpu_ticks(),
    os.times()) samples: all busy time minus this benchmark's own (this script and every
    process it has reaped: the clients, cordon and its proxy, the server and the relay)."""
    d = [b - a for a, b in zip(t0, t1)]
    hz = os.sysconf("SC_CLK_TCK")
    # user, nice, system, steal: irq and softirq time (most of loopback TCP's receive work) is
    # charged to no process, ours included, so it is left out on both sides.
    busy = (d[0] + d[1] + d[2] + d[7]) / hz
    own = sum(b - a for a, b in zip(own0[:4], own1[:4]))
    return max(0.0, busy - own) / max(1e-9, sum(d) / hz)


# ---- (a) throughput ----------------------------------------------------------------------------

def download(r, via, size):
    d = r.json(via, "get", size)
    if not d["ok"]:
        raise RuntimeError(f"{via}: download failed: {d}")
    return size / d["sec"] / 1e9


def bench_throughput(r, size, rounds):
    for via in TVIAS:  # warm-up, every byte verified
        d = r.json(via, "get", size, "verify")
        if not d["ok"] or d["bytes"] != size:
            raise RuntimeError(f"{via}: verified download failed: {d}")
    gbps = {v: [] for v in TVIAS}
    for i in range(rounds):
        for k in range(len(TVIAS)):
            via = TVIAS[(i + k) % len(TVIAS)]
            gbps[via].append(download(r, via, size))
        print(f"  throughput round {i + 1}/{rounds}: " +
              ", ".join(f"{v} {gbps[v][-1]:.2f}" for v in TVIAS) + " GB/s", file=sys.stderr)
    return gbps


# ---- (b) latency -------------------------------------------------------------------------------

def bench_latency(r, conns):
    per = conns // 3
    us = {v: [] for v in VIAS}
    errors = {v: 0 for v in VIAS}
    for i in range(3):
        for k in range(len(VIAS)):
            via = VIAS[(i + k) % len(VIAS)]
            p = subprocess.run(r.argv(via, "latency", per, 10), cwd=r.cwd, env=r.env,
                               capture_output=True, text=True)
            d = json.loads(p.stdout.strip().splitlines()[-1])
            us[via] += d["us"]
            errors[via] += d["errors"]
        print(f"  latency round {i + 1}/3: " +
              ", ".join(f"{v} {statistics.median(us[v]):.0f} us" for v in VIAS), file=sys.stderr)
    return us, errors


def bench_compare(r, other, size, rounds):
    """--compare: direct, CONNECT and SOCKS5 with this cordon and with `other` (another build),
    in the same rotated rounds after a verified warm-up of each: {label: [GB/s...]}."""
    runners = {"A": r, "B": Runner(r.exe, other, r.hostport, r.relay, r.cwd, r.env)}
    paths = [("direct", "A", "direct")] + [(f"{v} {k}", k, v) for v in ("connect", "socks")
                                           for k in ("A", "B")]
    for _, k, v in paths:
        d = runners[k].json(v, "get", size, "verify")
        if not d["ok"] or d["bytes"] != size:
            raise RuntimeError(f"{v} {k}: verified download failed: {d}")
    gbps = {label: [] for label, _, _ in paths}
    for i in range(rounds):
        for j in range(len(paths)):
            label, k, v = paths[(i + j) % len(paths)]
            gbps[label].append(download(runners[k], v, size))
    return gbps


def report_compare(out, gbps, a, b, rounds, size):
    d = statistics.median(gbps["direct"])
    out += [f"### Throughput, two builds: one {size >> 20} MiB download ({rounds} rotated rounds; "
            f"medians)", "", f"A: `{a}`; B: `{b}`", "",
            "| path | median | vs direct | every round |", "|---|---|---|---|"]
    for label, xs in gbps.items():
        m = statistics.median(xs)
        out.append(f"| {label} | {m:.2f} GB/s | {m / d:.2f}× | "
                   f"{', '.join(f'{x:.2f}' for x in xs)} |")
    out.append("")


# ---- (c) concurrent tunnels --------------------------------------------------------------------

def proxy_pid(parent):
    """The `cordon-proxy` process among parent's children."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        if ppid == parent and comm == "cordon-proxy":
            return int(name)
    return None


def sample(pid):
    s = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM", "Threads"):
                s[k] = int(v.split()[0])
    socks = pipes = other = pipe_bytes = 0
    seen = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            t = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if t.startswith("socket:"):
            socks += 1
        elif t.startswith("pipe:"):
            pipes += 1
            if t not in seen:  # both ends of a pipe: count its capacity once
                seen.add(t)
                pipe_bytes += pipe_size(f"/proc/{pid}/fd/{fd}")
        else:
            other += 1
    s.update(fds=socks + pipes + other, sockets=socks, pipes=pipes, pipe_kib=pipe_bytes >> 10)
    return s


def pipe_size(path):
    """A pipe's capacity, through a second read-only open of it (nothing is read)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return 0
    try:
        return fcntl.fcntl(fd, F_GETPIPE_SZ)
    finally:
        os.close(fd)


def bench_tunnels(r, via, n, payload, busy_rounds, size):
    p = subprocess.Popen(r.argv(via, "tunnels", n, payload), cwd=r.cwd, env=r.env,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    res = {"samples": {}}
    try:
        for phase in ("start", "open", "echo"):
            line = p.stdout.readline()
            if not line:
                raise RuntimeError(f"tunnels {via}: the client ended before phase {phase}")
            d = json.loads(line)
            pid = proxy_pid(p.pid)
            if pid is None:
                raise RuntimeError(f"tunnels {via}: no cordon-proxy child of {p.pid}")
            res["samples"][phase] = sample(pid)
            if phase != "start":
                res[phase] = d
            # The same downloads in another session just before the tunnels open and while
            # they are open: does one session's crowd slow the others down?
            if phase in ("start", "open") and busy_rounds:
                res[f"{phase}_gbps"] = [download(r, via, size) for _ in range(busy_rounds)]
            p.stdin.write("\n")
            p.stdin.flush()
        p.stdin.close()
        res["exit"] = p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    print(f"  tunnels {via}: {json.dumps(res)}", file=sys.stderr)
    return res


# ---- report ------------------------------------------------------------------------------------

def pipe_budget():
    with open("/proc/sys/fs/pipe-user-pages-soft") as f:
        return int(f.read())


def verdict(ok):
    return "met" if ok else "**NOT met**"


def report_throughput(out, gbps, rounds, size):
    d = statistics.median(gbps["direct"])
    out += [f"### Throughput: one {size >> 20} MiB download ({rounds} rotated rounds after a "
            f"verified warm-up; medians)", "",
            "| path | median | min – max | vs direct | vs relay | target |",
            "|---|---|---|---|---|---|"]
    rl = statistics.median(gbps["relay"])
    for v in TVIAS:
        m = statistics.median(gbps[v])
        tgt = f"≥ 0.80×: {verdict(m / d >= 0.8)}" if v in ("connect", "socks") else \
            "report" if v in ("forward", "ruled") else "–"
        vs_relay = f"{m / rl:.2f}×" if v not in ("direct", "relay") else "–"
        out.append(f"| {LABEL[v]} | {m:.2f} GB/s | {min(gbps[v]):.2f} – {max(gbps[v]):.2f} | "
                   f"**{m / d:.2f}×** | {vs_relay} | {tgt} |")
    out.append("")


def report_latency(out, us, errors, conns):
    dm, d90 = statistics.median(us["direct"]), pct(us["direct"], 0.9)
    out += [f"### Latency of a new connection ({conns} per path: socket() to the first byte of "
            f"a 2-byte answer)", "",
            "| path | median | p90 | added (median / p90) | errors | target |",
            "|---|---|---|---|---|---|"]
    for v in VIAS:
        m, p90 = statistics.median(us[v]), pct(us[v], 0.9)
        add = "–" if v == "direct" else \
            f"**{(m - dm) / 1e3:+.3f}** / {(p90 - d90) / 1e3:+.3f} ms"
        tgt = "–" if v == "direct" else f"≤ +0.3 ms: {verdict(m - dm <= 300)}"
        out.append(f"| {LABEL[v]} | {m / 1e3:.3f} ms | {p90 / 1e3:.3f} ms | {add} | "
                   f"{errors[v]} | {tgt} |")
    out.append("")


def report_tunnels(out, tun, n, payload, size):
    out += [f"### {n:,} concurrent tunnels through one session's proxy ({payload:,} bytes echoed "
            f"through each, checked byte for byte)", "",
            "| protocol | opened | echoed intact | errors | all open after | echo phase | "
            "proxy RSS: idle / all open / peak (VmHWM) | proxy fds: idle / all open | "
            "pipe capacity, all open |",
            "|---|---|---|---|---|---|---|---|---|"]
    for via, t in tun.items():
        s = t["samples"]
        errs = t["echo"]["failed"]  # cumulative: the tunnels that failed to open count too
        detail = {**t["open"]["errors"], **t["echo"]["errors"]}
        e = f"**{errs}**" + (f" ({json.dumps(detail)})" if detail else "")
        out.append(f"| {'CONNECT' if via == 'connect' else 'SOCKS5'} | {t['open']['ok']} | "
                   f"{t['echo']['ok']} | {e} | {t['open']['ms']:.0f} ms | "
                   f"{t['echo']['ms']:.0f} ms | {s['start']['VmRSS'] / 1024:.1f} / "
                   f"{s['open']['VmRSS'] / 1024:.1f} / {s['echo']['VmHWM'] / 1024:.1f} MiB | "
                   f"{s['start']['fds']} / {s['open']['fds']} ({s['open']['sockets']} sockets, "
                   f"{s['open']['pipes']} pipe ends) | {s['open']['pipe_kib'] / 1024:.1f} MiB "
                   f"({s['open']['pipe_kib'] // 4:,} pages) |")
    ok = all(t["echo"]["failed"] == 0 and t["exit"] == 0
             for t in tun.values())
    out += ["", f"- target: zero errors — {verdict(ok)}"]
    for via, t in tun.items():
        lat = t["open"].get("latency_us", {})

        def ms(v):
            return "failed" if v < 0 else f"{v / 1000:.3f} ms"
        out.append(f"- a new {'CONNECT' if via == 'connect' else 'SOCKS5'} connection through "
                   f"the same proxy (median of 100, socket() to the first byte): "
                   f"{ms(lat.get('before', -1))} before the tunnels opened, "
                   f"{ms(lat.get('open', -1))} with all {n:,} open")
    t = tun.get("connect", {})
    if t.get("open_gbps"):
        def runs(xs):
            return f"**{statistics.median(xs):.2f} GB/s** ({', '.join(f'{x:.2f}' for x in xs)})"
        out.append(f"- {size >> 20} MiB CONNECT downloads in another session, just before the "
                   f"{n:,} CONNECT tunnels opened: {runs(t['start_gbps'])}; while they were "
                   f"open: {runs(t['open_gbps'])}. Pipe capacity is charged to the proxy's "
                   f"user, and that budget (fs.pipe-user-pages-soft = {pipe_budget():,} pages) "
                   f"is shared by the proxies of all sessions.")
    out.append("")


def report(m, load, args, gbps, us, errors, tun):
    out = [f"Measured {m['date']} on {m['nproc']} CPUs ({m['cpu']}), kernel {m['kernel']}, "
           f"{m['cordon']} at commit {m['commit']}, as uid {m['uid']}. Other work on the "
           f"machine: 1-minute load average {load[0]:.2f} at the start and {load[1]:.2f} at the "
           f"end; other processes used {100 * load[2]:.0f}% of the CPU time during the run.", "",
           f"Command: `{args.command_line}`", ""]
    if gbps is None:
        report_tunnels(out, tun, args.tunnels, args.payload, args.size_mib << 20)
        return "\n".join(out) + "\n"
    report_throughput(out, gbps, args.rounds, args.size_mib << 20)
    report_latency(out, us, errors, args.conns)
    report_tunnels(out, tun, args.tunnels, args.payload, args.size_mib << 20)
    out += ["Every round (GB/s):", ""]
    for v in TVIAS:
        out.append(f"- {LABEL[v]}: " + ", ".join(f"{x:.2f}" for x in gbps[v]))
    return "\n".join(out) + "\n"


def write_md(path, text):
    write_section(path, text, "egress")

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cordon", required=True)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--size-mib", type=int, default=200)
    ap.add_argument("--conns", type=int, default=300)
    ap.add_argument("--tunnels", type=int, default=1000)
    ap.add_argument("--payload", type=int, default=16384)
    ap.add_argument("--busy-rounds", type=int, default=3)
    ap.add_argument("--dir", default="/var/tmp")
    ap.add_argument("--write", metavar="FILE", help="update the egress section of FILE")
    ap.add_argument("--compare", metavar="CORDON",
                    help="only: throughput of CONNECT and SOCKS5 with --cordon (A) and this "
                         "other build (B), interleaved (not for --write)")
    ap.add_argument("--tunnels-only", action="store_true",
                    help="run (c) alone and print its table (not for --write)")
    args = ap.parse_args()
    args.command_line = " ".join(["bench/net.py"] + sys.argv[1:])
    cordon = os.path.abspath(args.cordon)
    root = tempfile.mkdtemp(prefix="cordon-bench-net.", dir=args.dir)
    server = relay = None
    try:
        home = os.path.join(root, "home")
        os.makedirs(home)
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "LC_ALL": "C"}
        exe = build(root)
        with open(os.path.join(root, "rules.json"), "w", encoding="utf-8") as f:
            json.dump(RULES, f)
        m, load0, ticks0, own0 = machine(cordon), loadavg(), cpu_ticks(), os.times()
        server = Server(exe, "serve")
        relay = Server(exe, "relay", server.hostport)
        r = Runner(exe, cordon, server.hostport, relay.hostport, root, env)
        gbps = us = errors = None
        if args.compare:
            print("throughput, two builds ...", file=sys.stderr)
            cmp = bench_compare(r, os.path.abspath(args.compare), args.size_mib << 20,
                                args.rounds)
            out = [f"Measured {m['date']}; load average {load0:.2f} at the start and "
                   f"{loadavg():.2f} at the end.", "",
                   f"Command: `{args.command_line}`", ""]
            report_compare(out, cmp, cordon, os.path.abspath(args.compare), args.rounds,
                           args.size_mib << 20)
            print("\n".join(out))
            return
        if not args.tunnels_only:
            print("throughput ...", file=sys.stderr)
            gbps = bench_throughput(r, args.size_mib << 20, args.rounds)
            print("latency ...", file=sys.stderr)
            us, errors = bench_latency(r, args.conns)
        print("tunnels ...", file=sys.stderr)
        size = args.size_mib << 20
        tun = {"connect": bench_tunnels(r, "connect", args.tunnels, args.payload,
                                        args.busy_rounds, size),
               "socks": bench_tunnels(r, "socks", args.tunnels, args.payload, 0, size)}
    finally:
        for s in (relay, server):
            if s:
                s.close()
        shutil.rmtree(root, ignore_errors=True)
    other = other_share(ticks0, cpu_ticks(), own0, os.times())
    text = report(m, (load0, loadavg(), other), args, gbps, us, errors, tun)
    print(text)
    if args.write and not args.tunnels_only:
        write_md(args.write, text)


if __name__ == "__main__":
    main()
