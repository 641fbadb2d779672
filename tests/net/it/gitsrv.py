#!/usr/bin/python3
# tests/net/it/gitsrv.py: a git smart-HTTP server for the gitPush group (tests/net/it/gitpush.sh):
# `git http-backend` behind a minimal CGI host, serving the bare repositories under ROOT with
# pushes enabled, on two loopback ports: plain HTTP and HTTPS (CERT, KEY). Every request line is
# appended to LOG (" chunked" after a chunked one) before the backend runs, so a test can tell that a refused push never reached
# the server. Writes "GIT_HTTP_PORT=.. GIT_TLS_PORT=.." to PORTS once both listen.
#
#   gitsrv.py ROOT CERT KEY LOG PORTS
import http.server
import os
import ssl
import subprocess
import sys
import threading


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # one request per connection; the response ends at close

    def log_message(self, fmt, *args):
        pass

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b""):
                        pass
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def run(self):
        with open(self.server.log, "a") as f:
            te = self.headers.get("Transfer-Encoding", "")
            f.write("%s %s%s\n" % (self.command, self.path, " chunked" if te else ""))
        path, _, query = self.path.partition("?")
        data = self.body() if self.command == "POST" else b""
        env = {"GIT_PROJECT_ROOT": self.server.root, "GIT_HTTP_EXPORT_ALL": "1",
               "PATH_INFO": path, "QUERY_STRING": query, "REQUEST_METHOD": self.command,
               "CONTENT_TYPE": self.headers.get("Content-Type", ""),
               "CONTENT_LENGTH": str(len(data)), "REMOTE_USER": "it", "REMOTE_ADDR": "127.0.0.1",
               "PATH": "/usr/bin:/bin"}
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        out = subprocess.run(["git", "http-backend"], input=data, env=env,
                             stdout=subprocess.PIPE, check=False).stdout
        head, _, rest = out.partition(b"\r\n\r\n")
        if not _:
            head, _, rest = out.partition(b"\n\n")
        status = "200 OK"
        lines = []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = value.strip()
            elif name:
                lines.append((name, value.strip()))
        code, _, phrase = status.partition(" ")
        self.send_response(int(code), phrase)
        for name, value in lines:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(rest)

    do_GET = do_POST = run


def serve(port_box, tls, args):
    root, cert, key, log = args
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.root, srv.log = root, log
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    port_box.append(srv.server_address[1])
    srv.serve_forever()


def main():
    root, cert, key, log, ports = sys.argv[1:6]
    boxes = [[], []]
    for i, tls in enumerate((False, True)):
        threading.Thread(target=serve, args=(boxes[i], tls, (root, cert, key, log)),
                         daemon=True).start()
    while not (boxes[0] and boxes[1]):
        threading.Event().wait(0.01)
    with open(ports + ".tmp", "w") as f:
        f.write("GIT_HTTP_PORT=%d GIT_TLS_PORT=%d\n" % (boxes[0][0], boxes[1][0]))
    os.rename(ports + ".tmp", ports)
    threading.Event().wait()


if __name__ == "__main__":
    main()
