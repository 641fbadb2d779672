#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""cordon benchmarks: TLS inspection (BENCHMARKS.md, "Request rules"; docs/design/network.md,
"TLS inspection").

  bench/tls.py --cordon build/cordon [--rounds 5] [--size-mib 64] [--requests 200] [--conns 50]

An HTTPS server of Python's (ssl + http.server, HTTP/1.1 keep-alive, a certificate this script
makes for bench.test) on 127.0.0.1, an ephemeral port. The client is this script too, run bare
on the host ("direct") or inside `cordon run` through the HTTP proxy's CONNECT tunnel:
"spliced" (no request rules: the tunnel is an opaque splice, the client verifies the server's
own certificate) and "terminated" (an egressRules allow rule for bench.test: the proxy
terminates TLS with the session CA, judges every request, and verifies the server against
tls.upstreamCa; the client trusts the session CA through SSL_CERT_FILE, set by cordon). Per
path and round: one download of --size-mib MiB (throughput, from the request to the last byte),
--requests small GETs on one keep-alive connection (per-request latency, median and p90), and
--conns new connections each with one GET (connection latency: TCP, CONNECT, TLS handshake,
request). Medians over the rounds. bench/net.py's netload speaks no TLS, hence a client of its
own here; the server is the same for every path, so the comparison is the proxy's cost (the
absolute figures are bounded by Python's server).
"""
import argparse
import http.client
import http.server
import json
import os
import socket
import socketserver
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time

NAME = "bench.test"
BLOCK = os.urandom(1 << 20)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def setup(self):
        super().setup()
        # The head and the body are two writes: without this, Nagle and delayed ACKs add 40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_GET(self):
        n = int(self.path.rsplit("/", 1)[1]) if self.path.startswith("/bytes/") else 2
        self.send_response(200)
        self.send_header("Content-Length", str(n))
        self.end_headers()
        while n > 0:
            k = min(n, len(BLOCK))
            self.wfile.write(BLOCK[:k])
            n -= k


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def serve(cert, key):
    srv = Server(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


class Direct(http.client.HTTPSConnection):
    """The host's client: bench.test for SNI and verification, 127.0.0.1 for the socket."""

    def connect(self):
        raw = socket.create_connection(("127.0.0.1", self.port), self.timeout)
        self.sock = self._context.wrap_socket(raw, server_hostname=NAME)


def connect(port, cafile):
    ctx = ssl.create_default_context(cafile=cafile or None)
    proxy = os.environ.get("HTTPS_PROXY")
    if proxy:
        host, pport = proxy.rsplit("/", 1)[1].rsplit(":", 1)
        c = http.client.HTTPSConnection(host, int(pport), context=ctx, timeout=60)
        c.set_tunnel(NAME, port)
    else:
        c = Direct(NAME, port, context=ctx, timeout=60)
    return c


def get(c, path):
    c.request("GET", path, headers={"Host": NAME})
    r = c.getresponse()
    n = 0
    while True:
        b = r.read(1 << 16)
        if not b:
            break
        n += len(b)
    if r.status != 200:
        raise SystemExit(f"GET {path}: {r.status}")
    return n


def client(port, cafile, size, requests, conns):
    c = connect(port, cafile)
    get(c, "/small")  # warm-up: the handshake, the leaf minted
    t = time.perf_counter()
    got = get(c, f"/bytes/{size}")
    secs = time.perf_counter() - t
    assert got == size, got
    lat = []
    for _ in range(requests):
        t = time.perf_counter()
        get(c, "/small")
        lat.append(time.perf_counter() - t)
    c.close()
    new = []
    for _ in range(conns):
        t = time.perf_counter()
        c = connect(port, cafile)
        get(c, "/small")
        new.append(time.perf_counter() - t)
        c.close()
    q = lambda xs, p: sorted(xs)[int(p * (len(xs) - 1))] * 1e3  # noqa: E731
    print(json.dumps({"gbps": size / secs / 1e9, "req_ms": q(lat, 0.5), "req_p90": q(lat, 0.9),
                      "conn_ms": q(new, 0.5), "conn_p90": q(new, 0.9)}))


def run(argv, env):
    p = subprocess.run(argv, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise SystemExit(f"{argv[:4]}: exit {p.returncode}: {p.stdout[-300:]} {p.stderr[-800:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cordon")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--size-mib", type=int, default=64)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--conns", type=int, default=50)
    ap.add_argument("--client", nargs=5, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.client:
        port, cafile, size, requests, conns = a.client
        return client(int(port), cafile if cafile != "-" else "", int(size), int(requests),
                      int(conns))
    if not a.cordon:
        ap.error("--cordon is required")
    cordon = os.path.abspath(a.cordon)
    tmp = tempfile.mkdtemp(prefix="cordon-bench-tls.", dir="/var/tmp")  # not /tmp: private inside
    os.chmod(tmp, 0o755)
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj",
                    f"/CN={NAME}", "-addext", f"subjectAltName=DNS:{NAME}", "-keyout", key,
                    "-out", cert], check=True, capture_output=True)
    os.chmod(key, 0o644)
    srv = serve(cert, key)
    port = srv.server_address[1]
    me = os.path.abspath(__file__)
    with open(os.path.join(tmp, "terminated.json"), "w") as f:
        json.dump({"tls": {"upstreamCa": [cert]},
                   "egressRules": [{"host": NAME, "methods": ["GET"], "action": "allow"}]}, f)
    base = [cordon, "run", "--allow-domain", NAME, "--allow-domain", f"127.0.0.1:{port}",
            "--resolve", f"{NAME}=127.0.0.1"]
    size = a.size_mib << 20
    args = lambda ca: ["/usr/bin/python3", me, "--client", str(port), ca, str(size),  # noqa: E731
                       str(a.requests), str(a.conns)]
    paths = {
        "direct": args(cert),
        "spliced": base + ["--"] + args(cert),
        "terminated": base + ["--policy", os.path.join(tmp, "terminated.json"), "--"] + args("-"),
    }
    env = {k: v for k, v in os.environ.items() if "PROXY" not in k.upper()}
    res = {k: [] for k in paths}
    for r in range(a.rounds):
        order = list(paths)[r % 3:] + list(paths)[:r % 3]
        for k in order:
            res[k].append(run(paths[k], env))
    load = os.getloadavg()[0]
    print(f"# {a.rounds} rounds, {a.size_mib} MiB, {a.requests} requests, {a.conns} connections; "
          f"load average {load:.1f} on {os.cpu_count()} CPUs")
    print("| path | throughput | request on a kept-alive connection (median / p90) | "
          "new connection + request (median / p90) |")
    print("|---|---|---|---|")
    for k, xs in res.items():
        m = lambda f: statistics.median(x[f] for x in xs)  # noqa: E731
        print(f"| {k} | {m('gbps'):.2f} GB/s | {m('req_ms'):.3f} / {m('req_p90'):.3f} ms | "
              f"{m('conn_ms'):.3f} / {m('conn_p90'):.3f} ms |")
    srv.shutdown()
    subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    sys.exit(main())
