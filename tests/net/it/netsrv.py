#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The host side of the network suite (tests/net/it/suite.sh): loopback servers, fixtures, and
the events reader. Standard library only; every socket is bound to 127.0.0.1.

  netsrv.py serve STATE ROOT CERT KEY   HTTP on two ports, HTTPS, UDP, a server that speaks
                                        first, and the upstream proxies below; writes STATE/ports
                                        (shell assignments) once every socket listens, logs each
                                        request to STATE/access.log (with the client's port:
                                        which connection carried it), each datagram to
                                        STATE/udp.log and what each upstream proxy was asked to
                                        STATE/upstream.log; runs until SIGTERM or its parent dies
  netsrv.py pip-index ROOT              a PEP 503 simple index under ROOT/simple with one tiny
                                        wheel (tinypkg 1.0) in ROOT/packages
  netsrv.py npm-registry ROOT URL       an npm registry's two files under ROOT/npm for one tiny
                                        package (tinynpm 1.0.0): its document ROOT/npm/tinynpm
                                        (JSON) and its tarball ROOT/npm/tarballs/tinynpm-1.0.0.tgz,
                                        which the document names as URL/tarballs/... with its
                                        sha512 integrity and sha1 shasum, so npm checks it
  netsrv.py events FILE [ACTION]        one line per violation (of ACTION only, if given): ACTION
                                        TAB TARGET TAB PROTO TAB RULE; exit 1 on a line that is
                                        not a JSON object

The HTTP handler speaks HTTP/1.1 with keep-alive:
  GET  /chunked/<mark>   a chunked response of 3 chunks (body "chunk-1\nchunk-2\nchunk-3\n")
  POST /echo/<mark>      the request body (Content-Length or chunked, decoded) answered as
                         "te=<chunked|length> len=<n> sha256=<hex>"
  GET  /hello/<mark>     "hello <port> <mark>"
  GET  /nocontent/<mark> 204, no body
  GET  /empty/<mark>     200 with "Content-Length: 0"
  GET  /notmodified/<mark> 304 with "Content-Length: 100" and no body
  GET  /conns/<mark>     "open=N": connections open to this server now (this one included)
  GET  /headers/<mark>   the names of the request's header fields, lower case, sorted
  GET  /echo-head/<mark> the request line and every header field as received, one per line,
                         answered and appended to echo.log beside access.log (the
                         credentials tests read what a server got, outside the sandbox)
  GET  /close/<mark>     a body without Content-Length or chunking, ended by closing
  GET  /idle-close/<mark> a keep-alive answer, then the idle connection closed after 0.2 s
  anything else          a static file under ROOT (the dumb-HTTP git repository, the pip index,
                         the npm registry), on every port, HTTPS included

BANNER_PORT: a server that speaks first ("220 cordon banner"), as SMTP or SSH do.

The upstream proxies (egressUpstream), each logging one line per request it gets, before it
answers: "NAME CONNECT HOST:PORT user=USER" (USER "-" without credentials, the name exactly as
asked, so a test can tell a name from an address):
  UP_HTTP_PORT        HTTP CONNECT, no credentials
  UP_HTTP_AUTH_PORT   HTTP CONNECT, Basic credentials cordon-up / s3cr3t-up, else 407
  UP_SOCKS_PORT       SOCKS5, no authentication
  UP_SOCKS_AUTH_PORT  SOCKS5, username/password cordon-up / s3cr3t-up only, else status 1
  UP_REFUSE_PORT      HTTP CONNECT, answers every request 403
They connect names under example.test, localhost and 127.0.0.1 to the host's 127.0.0.1 and
refuse every other destination (HTTP 502, SOCKS5 reply 4): the suite reaches no other address.
For the banner server they wait for its first line and send it in the same segment as their
answer, so the proxy must pass on bytes that came with the answer.
"""
import base64
import binascii
import hashlib
import http.server
import io
import json
import os
import select
import signal
import socket
import socketserver
import ssl
import struct
import sys
import tarfile
import threading
import time
import zipfile

LOG_LOCK = threading.Lock()
OPEN = {}  # server port -> connections open right now (under LOG_LOCK)


def log_line(path, line):
    """Appends one line; flushed before the answer goes out, so a client that got an answer can
    rely on the log already naming its request."""
    with LOG_LOCK, open(path, "a", encoding="utf-8", errors="replace") as f:
        f.write(line + "\n")


def make_handler(root, access_log):
    class Handler(http.server.SimpleHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def __init__(self, *a, **kw):
            super().__init__(*a, directory=root, **kw)

        def log_message(self, fmt, *args):  # quiet: the access log is ours
            pass

        def setup(self):
            super().setup()
            with LOG_LOCK:
                OPEN[self.server.server_address[1]] = OPEN.get(self.server.server_address[1], 0) + 1

        def finish(self):
            try:
                super().finish()
            finally:
                with LOG_LOCK:
                    OPEN[self.server.server_address[1]] -= 1

        def record(self):
            port = self.server.server_address[1]
            host = self.headers.get("Host", "-")
            log_line(access_log, f"port={port} method={self.command} path={self.path} "
                                 f"host={host} peer={self.client_address[1]}")

        def send_text(self, code, text):
            body = text.encode()
            self.send_response(code)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def read_body(self):
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                data = b""
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                    if size == 0:
                        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                            pass
                        return "chunked", data
                    data += self.rfile.read(size)
                    self.rfile.readline()
            n = int(self.headers.get("Content-Length", "0"))
            return "length", self.rfile.read(n)

        def do_POST(self):
            self.record()
            te, data = self.read_body()
            if not self.path.startswith("/echo/"):
                self.send_text(404, "no such endpoint\n")
                return
            self.send_text(200, f"te={te} len={len(data)} "
                                f"sha256={hashlib.sha256(data).hexdigest()}\n")

        def do_GET(self):
            self.record()
            port = self.server.server_address[1]
            if self.path.startswith("/hello/"):
                self.send_text(200, f"hello {port} {self.path[7:]}\n")
            elif self.path.startswith("/empty/"):
                self.send_text(200, "")
            elif self.path.startswith("/nocontent/"):
                self.send_response(204)
                self.end_headers()
            elif self.path.startswith("/notmodified/"):
                # RFC 9110 §8.6: a 304 may carry the Content-Length of the representation it
                # stands for, and never has a body.
                self.send_response(304)
                self.send_header("Content-Length", "100")
                self.end_headers()
            elif self.path.startswith("/conns/"):
                with LOG_LOCK:
                    self.send_text(200, f"open={OPEN.get(port, 0)}\n")
            elif self.path.startswith("/echo-head/"):
                head = [self.requestline] + [f"{k}: {v}" for k, v in self.headers.items()]
                text = "\n".join(head) + "\n"
                log_line(os.path.join(os.path.dirname(access_log), "echo.log"),
                         text.replace("\n", " | "))
                self.send_text(200, text)
            elif self.path.startswith("/headers/"):
                self.send_text(200, " ".join(sorted(k.lower() for k in self.headers.keys())) +
                               "\n")
            elif self.path.startswith("/idle-close/"):
                # A server whose keep-alive timeout is short: the answer says keep-alive, then
                # the idle connection is closed 0.2 s later.
                self.send_text(200, "closing when idle\n")
                self.wfile.flush()
                time.sleep(0.2)
                self.close_connection = True
            elif self.path.startswith("/close/"):
                # No Content-Length, no chunking: the body ends when the connection does.
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(b"body delimited by close\n")
                self.close_connection = True
            elif self.path.startswith("/chunked/"):
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for i in (1, 2, 3):
                    piece = f"chunk-{i}\n".encode()
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            else:
                super().do_GET()

        def do_HEAD(self):
            self.record()
            super().do_HEAD()

    return Handler


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def udp_loop(sock, udp_log):
    while True:
        data, peer = sock.recvfrom(65536)
        log_line(udp_log, f"from={peer[0]}:{peer[1]} data={data.decode(errors='replace')}")


def die_with_parent():
    parent = os.getppid()
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(0)


UP_USER, UP_PASS = b"cordon-up", b"s3cr3t-up"
BANNER = b"220 cordon banner\r\n"


def upstream_target(host, port):
    """Where a test upstream connects for HOST:PORT: the suite's names and loopback only."""
    h = host.lower().rstrip(".")
    if h.endswith(".example.test") or h in ("localhost", "127.0.0.1"):
        return ("127.0.0.1", port)
    return None


def pipe_both(a, b):
    def copy(src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass
    t = threading.Thread(target=copy, args=(b, a), daemon=True)
    t.start()
    copy(a, b)
    t.join()


def recv_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


class Upstream(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, name, kind, auth, refuse, log, banner_port):
        self.name, self.kind, self.auth, self.refuse = name, kind, auth, refuse
        self.log, self.banner_port = log, banner_port
        super().__init__(("127.0.0.1", 0), UpstreamHandler)


class UpstreamHandler(socketserver.BaseRequestHandler):
    def handle(self):
        self.request.settimeout(20)
        try:
            if self.server.kind == "http":
                self.http()
            else:
                self.socks()
        except (OSError, EOFError, ValueError):
            pass

    def record(self, host, port, user):
        log_line(self.server.log, f"{self.server.name} CONNECT {host}:{port} "
                                  f"user={user.decode(errors='replace') if user else '-'}")

    def dial(self, host, port):
        """The destination's socket and what it said first (the banner server), or None."""
        target = upstream_target(host, port)
        if not target:
            return None, b""
        try:
            d = socket.create_connection(target, timeout=10)
        except OSError:
            return None, b""
        early = b""
        if port == self.server.banner_port:
            while not early.endswith(b"\n") and select.select([d], [], [], 5)[0]:
                chunk = d.recv(4096)
                if not chunk:
                    break
                early += chunk
        return d, early

    def http(self):
        s, head = self.request, b""
        while b"\r\n\r\n" not in head and len(head) < 16384:
            chunk = s.recv(4096)
            if not chunk:
                return
            head += chunk
        lines = head.split(b"\r\n\r\n", 1)[0].split(b"\r\n")
        method, authority, _ = lines[0].split(b" ")
        user = pw = None
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"proxy-authorization":
                scheme, _, b64 = value.strip().partition(b" ")
                if scheme.lower() == b"basic":
                    try:
                        user, _, pw = base64.b64decode(b64, validate=True).partition(b":")
                    except binascii.Error:
                        pass
        host, _, port = authority.decode().rpartition(":")
        self.record(host.strip("[]"), port, user)
        if method != b"CONNECT" or self.server.refuse:
            s.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            return
        if self.server.auth and (user, pw) != (UP_USER, UP_PASS):
            s.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\n"
                      b"Proxy-Authenticate: Basic realm=\"netsrv\"\r\nContent-Length: 0\r\n\r\n")
            return
        d, early = self.dial(host.strip("[]"), int(port))
        if not d:
            s.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            return
        with d:
            s.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n" + early)
            pipe_both(s, d)

    def socks(self):
        s = self.request
        ver, n = recv_exact(s, 2)
        methods = recv_exact(s, n)
        want = 2 if self.server.auth else 0
        if ver != 5 or want not in methods:
            s.sendall(b"\x05\xff")
            return
        s.sendall(bytes([5, want]))
        user = None
        if self.server.auth:
            _, ulen = recv_exact(s, 2)
            user = recv_exact(s, ulen)
            pw = recv_exact(s, recv_exact(s, 1)[0])
            if (user, pw) != (UP_USER, UP_PASS):
                s.sendall(b"\x01\x01")
                return
            s.sendall(b"\x01\x00")
        _, cmd, _, atyp = recv_exact(s, 4)
        if atyp == 1:
            host = socket.inet_ntop(socket.AF_INET, recv_exact(s, 4))
        elif atyp == 4:
            host = socket.inet_ntop(socket.AF_INET6, recv_exact(s, 16))
        else:
            host = recv_exact(s, recv_exact(s, 1)[0]).decode("latin-1")
        port = struct.unpack("!H", recv_exact(s, 2))[0]
        self.record(host, f"{port} atyp={atyp}", user)
        d, early = self.dial(host, port) if cmd == 1 else (None, b"")
        if not d:
            s.sendall(b"\x05\x04\x00\x01\x00\x00\x00\x00\x00\x00")
            return
        with d:
            s.sendall(b"\x05\x00\x00\x01\x7f\x00\x00\x01\x00\x00" + early)
            pipe_both(s, d)


def banner_loop(sock):
    while True:
        c, _ = sock.accept()
        try:
            c.sendall(BANNER)
            c.settimeout(5)
            c.recv(4096)  # until the client speaks or closes
        except OSError:
            pass
        c.close()


def serve(state, root, cert, key):
    access_log = os.path.join(state, "access.log")
    handler = make_handler(root, access_log)
    servers = {}
    for name in ("HTTP_PORT", "HTTP2_PORT", "TLS_PORT"):
        srv = Server(("127.0.0.1", 0), handler)
        if name == "TLS_PORT":
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(cert, key)
            srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
        servers[name] = srv
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    banner = socket.socket()
    banner.bind(("127.0.0.1", 0))
    banner.listen(16)
    threading.Thread(target=banner_loop, args=(banner,), daemon=True).start()
    up_log = os.path.join(state, "upstream.log")
    banner_port = banner.getsockname()[1]
    for name, kind, auth, refuse in (("UP_HTTP_PORT", "http", False, False),
                                     ("UP_HTTP_AUTH_PORT", "http", True, False),
                                     ("UP_SOCKS_PORT", "socks5", False, False),
                                     ("UP_SOCKS_AUTH_PORT", "socks5", True, False),
                                     ("UP_REFUSE_PORT", "http", False, True)):
        servers[name] = Upstream(name.lower()[:-5].replace("_", "-"), kind, auth, refuse, up_log,
                                 banner_port)
    for srv in servers.values():
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    threading.Thread(target=udp_loop, args=(udp, os.path.join(state, "udp.log")),
                     daemon=True).start()
    lines = [f"{k}={s.server_address[1]}" for k, s in servers.items()]
    lines.append(f"UDP_PORT={udp.getsockname()[1]}")
    lines.append(f"BANNER_PORT={banner_port}")
    tmp = os.path.join(state, "ports.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    os.rename(tmp, os.path.join(state, "ports"))
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    die_with_parent()


def pip_index(root):
    """One pure-Python wheel and the two index pages pip reads (PEP 503), the file link carrying
    its sha256 so pip checks what it downloads."""
    name, version = "tinypkg", "1.0"
    whl = f"{name}-{version}-py3-none-any.whl"
    dist = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": b"VALUE = 'cordon-net-it'\n",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                            f"Summary: cordon network test fixture\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: cordon-net-it\n"
                         b"Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = ""
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record += f"{path},sha256={digest},{len(data)}\n"
    record += f"{dist}/RECORD,,\n"
    files[f"{dist}/RECORD"] = record.encode()
    os.makedirs(os.path.join(root, "packages"), exist_ok=True)
    os.makedirs(os.path.join(root, "simple", name), exist_ok=True)
    whl_path = os.path.join(root, "packages", whl)
    with zipfile.ZipFile(whl_path, "w") as z:
        for path, data in files.items():
            z.writestr(path, data)
    with open(whl_path, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    with open(os.path.join(root, "simple", "index.html"), "w", encoding="utf-8") as f:
        f.write(f'<!DOCTYPE html><html><body><a href="{name}/">{name}</a></body></html>\n')
    with open(os.path.join(root, "simple", name, "index.html"), "w", encoding="utf-8") as f:
        f.write(f'<!DOCTYPE html><html><body><a href="../../packages/{whl}#sha256={sha}">'
                f'{whl}</a></body></html>\n')


def npm_registry(root, url):
    """One package as a registry serves it: the document npm fetches first (a packument, RFC 8259
    JSON) and the tarball it names, with the digests npm verifies the download against."""
    name, version = "tinynpm", "1.0.0"
    files = {
        "package/package.json": json.dumps({"name": name, "version": version,
                                            "main": "index.js"}).encode(),
        "package/index.js": b"module.exports = 'cordon-net-it';\n",
    }
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for path, data in files.items():
            info = tarfile.TarInfo(path)
            info.size, info.mode = len(data), 0o644
            t.addfile(info, io.BytesIO(data))
    tgz = buf.getvalue()
    os.makedirs(os.path.join(root, "npm", "tarballs"), exist_ok=True)
    tgz_name = f"{name}-{version}.tgz"
    with open(os.path.join(root, "npm", "tarballs", tgz_name), "wb") as f:
        f.write(tgz)
    integrity = "sha512-" + base64.b64encode(hashlib.sha512(tgz).digest()).decode()
    doc = {"name": name, "dist-tags": {"latest": version},
           "versions": {version: {"name": name, "version": version, "main": "index.js",
                                  "dist": {"tarball": f"{url}/tarballs/{tgz_name}",
                                           "integrity": integrity,
                                           "shasum": hashlib.sha1(tgz).hexdigest()}}}}
    with open(os.path.join(root, "npm", name), "w", encoding="utf-8") as f:
        json.dump(doc, f)


def events(path, action=None):
    """Prints every violation of an events file (one per line), or those of one action."""
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                ev = json.loads(line)
            except ValueError:
                print(f"line {n}: not JSON", file=sys.stderr)
                return 1
            if not isinstance(ev, dict):
                print(f"line {n}: not an object", file=sys.stderr)
                return 1
            if ev.get("type") != "violation" or action not in (None, ev.get("action")):
                continue
            raw = ev.get("raw") if isinstance(ev.get("raw"), dict) else {}
            cols = [ev.get("action"), ev.get("target"), raw.get("syscall"), raw.get("rule")]
            if "reason" in raw:  # a deny entry's reason (docs/policy.md)
                cols.append(raw["reason"])
            if "method" in raw:  # a request rule's refusal: what was asked
                cols += [raw["method"], raw.get("path", "")]
            if "ref" in raw:  # the git push gateway's refusal: the refused ref
                cols.append(raw["ref"])
            print("\t".join(str(x) for x in cols))
    return 0


def main(argv):
    if len(argv) == 6 and argv[1] == "serve":
        serve(*argv[2:])
    elif len(argv) == 3 and argv[1] == "pip-index":
        pip_index(argv[2])
    elif len(argv) == 4 and argv[1] == "npm-registry":
        npm_registry(argv[2], argv[3])
    elif len(argv) in (3, 4) and argv[1] == "events":
        return events(*argv[2:])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
