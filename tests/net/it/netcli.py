#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Clients for the network suite (tests/net/it/suite.sh), run inside the sandbox (and outside,
for the controls). Standard library only; every connection goes to 127.0.0.1 or ::1, which
inside the sandbox is its own loopback, where only cordon's proxy listens.

Byte arguments (DATA, HOST) are Python string escapes read as Latin-1 ("\\r\\n", "\\x00").

  netcli.py raw PORT DATA          send DATA to 127.0.0.1:PORT, read until the peer closes (at
                                   most 20 s), print every status line of the answer (one per
                                   pipelined response) or "(closed)"
  netcli.py socks ATYP HOST PORT [PATH]
                                   a SOCKS5 CONNECT (no authentication) through 127.0.0.1:1080;
                                   ATYP is domain, ipv4 or ipv6; prints "rep=N", then with PATH
                                   and rep 0 the status line of a GET PATH through the tunnel
  netcli.py socks-host HOST PORT ASKED PATH
                                   a SOCKS5 CONNECT to the name HOST, then GET PATH with Host:
                                   ASKED: prints "rep=N", then the status line or "(closed)"
  netcli.py seq PORT SECS DATA...  requests on one connection to 127.0.0.1:PORT, each after the
                                   previous answer and SECS of quiet: prints each status line
  netcli.py socks-cmd CMD          a SOCKS5 request with command CMD (2 BIND, 3 UDP ASSOCIATE):
                                   prints "rep=N"
  netcli.py slowloris PORT DATA    send DATA (half a request) and wait: prints "closed after N s"
                                   once the proxy hangs up, or "open after 30 s", then the first
                                   line of what came back or "(nothing)"
  netcli.py tunnel-idle PORT SECS PATH
                                   CONNECT 127.0.0.1:PORT through 127.0.0.1:3128, stay idle for
                                   SECS, then GET PATH through the tunnel: prints both status
                                   lines
  netcli.py fd-flood PORT MAX SECS PATH
                                   CONNECT tunnels to 127.0.0.1:PORT through 127.0.0.1:3128,
                                   opened one after the other and held, until one is not
                                   answered (at most MAX): prints "tunnels open" when at least
                                   40 were, then how the first one past them ended ("refused":
                                   closed unanswered, "refused: HTTP/1.1 502 ..." answered 502;
                                   "no answer" after 5 s; "error: ..."); then
                                   SECS of quiet, one more CONNECT (the same words), every tunnel
                                   closed, and a GET PATH through the proxy: its status line
  netcli.py relay LPORT TPORT CMD...
                                   a relay on 127.0.0.1:LPORT forwarding to 127.0.0.1:TPORT
                                   while CMD runs; exits with CMD's status
  netcli.py udp PORT MSG           one datagram to 127.0.0.1:PORT
  netcli.py connect PORT           a direct TCP connect (no proxy): "connected" or "error: ..."
  netcli.py urllib URL             urllib GET (it honours http_proxy): "status N" or "error N"
  netcli.py tcp HOST PORT DATA     a plain TCP client, no proxy of any kind: HOST is resolved by
                                   the system's resolver, DATA sent, the first line of the answer
                                   printed, or "error: ERRNO" (a reset: "error: ECONNRESET")
  netcli.py dns SERVER NAME        one A query for NAME over UDP to SERVER:53: prints "A ADDRESS"
                                   for each answer, "rcode N" when there is none, "timeout"
  netcli.py peek-proxy              the landlock backend's attacker: finds this run's proxy
                                   process (the cordon-proxy child of the launcher that is the
                                   parent of this run's cordon-guard) and tries to read its
                                   memory: prints "proxies N", then "mem ERR" (opening
                                   /proc/PID/mem) and "vm ERR" (process_vm_readv of its stack),
                                   ERR an errno name or "read"; and "self ERR" for
                                   /proc/self/mem (the control: "read")
  netcli.py late-body URL          a chunked POST head for URL through 127.0.0.1:3128, its
                                   answer read to the proxy's end of it, then the body sent
                                   after all (two 64 KiB pieces, 200 ms apart): prints the status
                                   line, then "body sent" or the error the sending met (a proxy
                                   that closed instead of draining makes the second piece meet
                                   a reset)
"""
import errno
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request


def unescape(text):
    return text.encode("latin-1", "backslashreplace").decode("unicode_escape").encode("latin-1")


def recv_all(sock, limit_s, stop_at_tunnel=False):
    """Reads until the peer closes or limit_s passes; with stop_at_tunnel, also stops at the end
    of a "200 Connection established" head (the tunnel stays open)."""
    sock.settimeout(limit_s)
    data = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
            if stop_at_tunnel and b"\r\n\r\n" in data and \
                    data.startswith(b"HTTP/1.1 200 Connection established"):
                break
    except socket.timeout:
        pass
    except ConnectionResetError:
        pass  # a peer that answers and closes before reading everything we sent
    return data


def cmd_raw(port, data):
    data = unescape(data)
    # A CONNECT followed by nothing waits for no more than the tunnel's head; one followed by
    # bytes for the tunnel (sent early, before the answer) reads what they bring back.
    early = data.startswith(b"CONNECT ") and data.split(b"\r\n\r\n", 1)[-1] != b""
    with socket.create_connection(("127.0.0.1", int(port)), timeout=10) as s:
        s.sendall(data)
        got = recv_all(s, 20, stop_at_tunnel=not early).decode("latin-1")
        sys.stderr.write(got + "\n")  # for diagnostics
        lines = re.findall(r"HTTP/1\.[01] [0-9]{3}[^\r\n]*", got)
        print("\n".join(lines) if lines else "(closed)")
    return 0


def recv_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed by the proxy")
        data += chunk
    return data


def socks_request(atyp, host, port):
    if atyp == "domain":
        name = unescape(host)
        return b"\x05\x01\x00\x03" + bytes([len(name)]) + name + struct.pack(">H", port)
    if atyp == "ipv4":
        return b"\x05\x01\x00\x01" + socket.inet_pton(socket.AF_INET, host) + \
            struct.pack(">H", port)
    return b"\x05\x01\x00\x04" + socket.inet_pton(socket.AF_INET6, host) + \
        struct.pack(">H", port)


def socks_connect(s, atyp, host, port):
    """A SOCKS5 CONNECT (no authentication) on s: prints "rep=N"; True when the tunnel is open."""
    s.sendall(b"\x05\x01\x00")
    if recv_exact(s, 2) != b"\x05\x00":
        print("method refused")
        return False
    s.sendall(socks_request(atyp, host, int(port)))
    head = recv_exact(s, 4)
    print(f"rep={head[1]}")
    if head[1] != 0:
        return False
    alen = {1: 4, 4: 16}.get(head[3])
    recv_exact(s, (alen if alen else recv_exact(s, 1)[0]) + 2)
    return True


def cmd_socks_host(host, port, asked, path):
    """A SOCKS5 CONNECT to the name `host`, then an HTTP request for the Host `asked`."""
    with socket.create_connection(("127.0.0.1", 1080), timeout=20) as s:
        if not socks_connect(s, "domain", host, port):
            return 0
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: {asked}\r\n\r\n".encode())
        got = recv_all(s, 20).decode("latin-1")
        print(got.split("\r\n", 1)[0] if got else "(closed)")
    return 0


def cmd_socks(atyp, host, port, path=None):
    with socket.create_connection(("127.0.0.1", 1080), timeout=20) as s:
        if not socks_connect(s, atyp, host, port):
            return 0
        if path:
            # The Host a client sends is the name it asked the tunnel for (a tunnel to a name
            # refuses another: docs/design/network.md, "Fronting").
            name = host if atyp == "domain" else "socks.test"
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: {name}\r\nConnection: close\r\n\r\n"
                      .encode())
            print(recv_all(s, 20).decode("latin-1").split("\r\n", 1)[0])
    return 0


def read_response(sock, head_only=False):
    """One response framed by Content-Length (the suite's servers and the proxy's own answers
    always send one; 1xx, 204, 304 and answers to HEAD have no body); returns its status line,
    or "(closed)"."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return "(closed)"
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    m = re.search(rb"\r\ncontent-length: *([0-9]+)", head, re.I)
    status = head.split(b"\r\n", 1)[0].decode("latin-1")
    code = status.split(" ")[1] if " " in status else ""
    want = int(m.group(1)) if m and not head_only and code not in ("204", "304") \
        and not code.startswith("1") else 0
    while len(body) < want:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return status


def cmd_seq(port, secs, *requests):
    """Requests on one connection, one at a time, SECS apart."""
    with socket.create_connection(("127.0.0.1", int(port)), timeout=20) as s:
        for i, req in enumerate(requests):
            if i:
                time.sleep(float(secs))
            data = unescape(req)
            s.sendall(data)
            print(read_response(s, head_only=data.startswith(b"HEAD ")))
    return 0


def cmd_socks_cmd(cmd):
    """A SOCKS5 request other than CONNECT (2 BIND, 3 UDP ASSOCIATE) for 0.0.0.0:0."""
    with socket.create_connection(("127.0.0.1", 1080), timeout=20) as s:
        s.sendall(b"\x05\x01\x00")
        if recv_exact(s, 2) != b"\x05\x00":
            print("method refused")
            return 1
        s.sendall(b"\x05" + bytes([int(cmd)]) + b"\x00\x01\x00\x00\x00\x00\x00\x00")
        print(f"rep={recv_exact(s, 4)[1]}")
    return 0


def cmd_slowloris(port, data):
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", int(port)), timeout=10) as s:
        s.sendall(unescape(data))
        got = recv_all(s, 30)
        took = time.monotonic() - start
        if took >= 29.5:
            print("open after 30 s")
        else:
            print(f"closed after {int(took)} s")
        print(got.decode("latin-1").split("\r\n", 1)[0] if got else "(nothing)")
    return 0


def cmd_tunnel_idle(port, secs, path):
    with socket.create_connection(("127.0.0.1", 3128), timeout=10) as s:
        s.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
                  .encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = s.recv(1)
            if not chunk:
                break
            head += chunk
        print(head.decode("latin-1").split("\r\n", 1)[0])
        time.sleep(float(secs))
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                  .encode())
        print(recv_all(s, 20).decode("latin-1").split("\r\n", 1)[0])
    return 0


def try_tunnel(port):
    """A CONNECT through the proxy: (socket, "open") when answered 200, else (None, how it
    ended)."""
    try:
        s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
    except OSError as e:
        return None, f"error: {errno.errorcode.get(e.errno, e)}"
    try:
        s.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
                  .encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = s.recv(1)
            if not chunk:
                break
            head += chunk
    except socket.timeout:
        s.close()
        return None, "no answer"
    except OSError as e:
        s.close()
        return None, "refused" if e.errno == errno.ECONNRESET else f"error: {e}"
    if head.startswith(b"HTTP/1.1 200"):
        return s, "open"
    s.close()
    line = head.decode("latin-1").split("\r\n", 1)[0]
    # 502: accepted, but no descriptor left for the connection to the destination.
    return None, "refused" if not head else f"refused: {line}" if " 502 " in line else line


def cmd_fd_flood(port, most, secs, path):
    held, how = [], "open"
    while len(held) < int(most):
        s, how = try_tunnel(port)
        if not s:
            break
        held.append(s)
    # An idle tunnel costs the proxy two descriptors (its sockets, no pipes): at least 40 fit in
    # the suite's 128 where six each (with pipes) would be 18.
    print("tunnels open" if len(held) >= 40 else f"only {len(held)} tunnels")
    print(how)
    time.sleep(float(secs))  # past the proxy's periodic reload of the host's addresses
    s, how = try_tunnel(port)
    print(how)
    for t in held + ([s] if s else []):
        t.close()
    time.sleep(0.5)
    with socket.create_connection(("127.0.0.1", 3128), timeout=10) as c:
        c.sendall(f"GET http://127.0.0.1:{port}{path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                  f"Connection: close\r\n\r\n".encode())
        got = recv_all(c, 20)
        print(got.decode("latin-1").split("\r\n", 1)[0] if got else "(closed)")
    return 0


def pipe(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
        b.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def relay_conn(client, tport):
    try:
        upstream = socket.create_connection(("127.0.0.1", tport))
    except OSError:
        client.close()
        return
    t = threading.Thread(target=pipe, args=(upstream, client), daemon=True)
    t.start()
    pipe(client, upstream)
    t.join()
    client.close()
    upstream.close()


def cmd_relay(lport, tport, argv):
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", int(lport)))
    srv.listen(16)

    def accept_loop():
        while True:
            c, _ = srv.accept()
            threading.Thread(target=relay_conn, args=(c, int(tport)), daemon=True).start()

    threading.Thread(target=accept_loop, daemon=True).start()
    return subprocess.call(argv)


def cmd_udp(port, msg):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.sendto(msg.encode(), ("127.0.0.1", int(port)))
        except OSError as e:
            print(f"error: {errno.errorcode.get(e.errno, e.errno)}")
            return 0
    print("sent")
    return 0


def cmd_connect(port):
    try:
        with socket.create_connection(("127.0.0.1", int(port)), timeout=5):
            print("connected")
    except OSError as e:
        print(f"error: {errno.errorcode.get(e.errno, e) if e.errno else e}")
    return 0


def cmd_urllib(url, data=None):
    try:
        with urllib.request.urlopen(url, data=data, timeout=20) as r:
            print(f"status {r.status}")
    except urllib.error.HTTPError as e:
        print(f"error {e.code} {e.headers.get('X-Cordon-Error', '')}")
    except urllib.error.URLError as e:
        print(f"error {e.reason}")
    return 0


def cmd_urllib_post(url):
    return cmd_urllib(url, b"x=1")


def cmd_tcp(host, port, data):
    try:
        with socket.create_connection((host, int(port)), timeout=10) as s:
            s.sendall(unescape(data))
            s.settimeout(20)
            got = b""
            while b"\r\n" not in got:  # a reset here is reported, not taken for the end
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
            if not got:
                print("(closed)")
            else:
                print(got.split(b"\r\n", 1)[0].decode("latin-1"))
    except OSError as e:
        print(f"error: {errno.errorcode.get(e.errno, e) if e.errno else e}")
    return 0


def cmd_dns(server, name):
    qid = 0x4242
    q = struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.split("."):
        q += bytes([len(label)]) + label.encode()
    q += b"\0" + struct.pack("!HH", 1, 1)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(5)
        s.sendto(q, (server, 53))
        try:
            a = s.recv(512)
        except socket.timeout:
            print("timeout")
            return 0
    rid, flags, qd, an = struct.unpack("!HHHH", a[:8])
    if rid != qid:
        print("wrong id")
        return 0
    off = len(q)  # the question is echoed: the answers follow it
    out = []
    for _ in range(an):
        _, rtype, _, _, rdlen = struct.unpack("!HHHIH", a[off:off + 12])
        if rtype == 1 and rdlen == 4:
            out.append("A " + socket.inet_ntoa(a[off + 12:off + 16]))
        off += 12 + rdlen
    print("\n".join(out) if out else f"rcode {flags & 0xf}")
    return 0


def cmd_late_body(url):
    host = url.split("/")[2]
    head = (f"POST {url} HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n")
    piece = b"10000\r\n" + b"x" * 0x10000 + b"\r\n"
    with socket.create_connection(("127.0.0.1", 3128), timeout=20) as s:
        s.sendall(head.encode())
        answer = recv_all(s, 20)
        print(answer.split(b"\r\n", 1)[0].decode("latin-1") or "(closed)")
        try:
            s.sendall(piece)
            time.sleep(0.2)
            s.sendall(piece)
            print("body sent")
        except OSError as e:
            print(f"error: {errno.errorcode.get(e.errno, e) if e.errno else e}")
    return 0


def _status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return line.split()[1]
    return ""


def _vm_read(pid, addr):
    """process_vm_readv of 16 bytes at addr: "read" or the errno's name."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)

    class Iov(ctypes.Structure):
        _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
    buf = ctypes.create_string_buffer(16)
    local, remote = Iov(ctypes.addressof(buf), 16), Iov(addr, 16)
    libc.process_vm_readv.restype = ctypes.c_ssize_t
    n = libc.process_vm_readv(int(pid), ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
    return "read" if n == 16 else errno.errorcode.get(ctypes.get_errno(), "?")


def cmd_peek_proxy():
    import ctypes
    pid = str(os.getpid())
    while pid not in ("0", "1") and _status(pid, "Name") != "cordon-guard":
        pid = _status(pid, "PPid")
    launcher = _status(pid, "PPid") if pid not in ("0", "1") else "-"
    proxies = []
    for comm in os.listdir("/proc"):
        if comm.isdigit():
            try:
                if _status(comm, "Name") == "cordon-proxy" and _status(comm, "PPid") == launcher:
                    proxies.append(comm)
            except OSError:
                pass
    print(f"proxies {len(proxies)}")
    for p in proxies:
        try:
            with open(f"/proc/{p}/mem", "rb") as f:
                f.read(1)
            print("mem read")
        except OSError as e:
            print(f"mem {errno.errorcode.get(e.errno, e)}")
        # Any address: the permission check comes before the address is looked at.
        print(f"vm {_vm_read(p, 0x7ffffff00000)}")
    # The control: the same open and read of this process's own memory works.
    here = ctypes.create_string_buffer(b"sixteen bytes..")
    try:
        with open("/proc/self/mem", "rb") as f:
            f.seek(ctypes.addressof(here))
            print("self read" if f.read(15) == b"sixteen bytes.." else "self other")
    except OSError as e:
        print(f"self {errno.errorcode.get(e.errno, e)}")
    return 0


def main(argv):
    cmds = {
        "raw": (cmd_raw, 2), "slowloris": (cmd_slowloris, 2), "udp": (cmd_udp, 2),
        "connect": (cmd_connect, 1), "urllib": (cmd_urllib, 1),
        "urllib-post": (cmd_urllib_post, 1),
        "tunnel-idle": (cmd_tunnel_idle, 3), "socks-cmd": (cmd_socks_cmd, 1),
        "fd-flood": (cmd_fd_flood, 4),
        "late-body": (cmd_late_body, 1), "peek-proxy": (cmd_peek_proxy, 0), "socks-host": (cmd_socks_host, 4), "tcp": (cmd_tcp, 3), "dns": (cmd_dns, 2),
    }
    if len(argv) >= 2 and argv[1] in cmds and len(argv) == 2 + cmds[argv[1]][1]:
        return cmds[argv[1]][0](*argv[2:])
    if len(argv) in (5, 6) and argv[1] == "socks":
        return cmd_socks(*argv[2:])
    if len(argv) >= 5 and argv[1] == "seq":
        return cmd_seq(*argv[2:])
    if len(argv) >= 5 and argv[1] == "relay":
        return cmd_relay(argv[2], argv[3], argv[4:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
