# SPDX-License-Identifier: Apache-2.0
"""What the sync and the asyncio clients share: the socket's discovery and the checks before
trusting it, request encoding and the parsing of the daemon's lines (docs/protocol.md)."""
import base64
import errno
import json
import os
import socket
import stat
import struct
from typing import Any, Dict, Mapping, Optional, Tuple

from .errors import DaemonConnectionError, ProtocolError, UsageError

PROTOCOL_VERSION = 1
"""The protocol version this client speaks: the "v" of every line, both ways."""
REQUEST_LINE_MAX = 12 * 1024 * 1024
"""docs/protocol.md, "Framing": a longer request makes the daemon close the connection."""
RESPONSE_LINE_MAX = 64 * 1024 * 1024
"""The longest line accepted from the daemon (an fs.read of 8 MiB in base64 is ~11 MiB)."""


def default_socket_path(env: Optional[Mapping[str, str]] = None) -> str:
    """$XDG_RUNTIME_DIR/cordon/cordond.sock (an absolute XDG_RUNTIME_DIR only), else
    /run/user/cordon-UID/cordond.sock when /run/user is writable, else
    /tmp/cordon-UID/cordond.sock: the rule of cordond and ``cordon`` (src/daemon/main.c)."""
    env = os.environ if env is None else env
    rt = env.get("XDG_RUNTIME_DIR", "")
    if rt.startswith("/"):
        return f"{rt}/cordon/cordond.sock"
    base = "/run/user" if os.access("/run/user", os.W_OK) else "/tmp"
    return f"{base}/cordon-{os.getuid()}/cordond.sock"


def _hint(path: str, why: str) -> str:
    return (f"cannot connect to cordond at '{path}': {why}; start it with 'cordond' (or "
            "'systemctl --user start cordond.socket'), or give socket_path")


def _open_private_dir(path: str) -> int:
    """The socket's directory, opened without following a symlink and checked as cordond
    checks its own (src/daemon/server.c, check_private_dir): owned by our effective uid, no
    group or other permission bits. A socket elsewhere could have been bound by another user (a
    /tmp/cordon-UID created before ours exists), who would receive every request, policies
    included, and could forge an exec's output and exit status."""
    d = os.path.dirname(path)
    try:
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as e:
        why = ("its directory is a symlink or not a directory"
               if e.errno in (errno.ELOOP, errno.ENOTDIR) else e.strerror)
        raise DaemonConnectionError(_hint(path, why)) from None
    st = os.fstat(fd)
    euid = os.geteuid()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != euid or st.st_mode & 0o077:
        os.close(fd)
        raise DaemonConnectionError(
            f"refusing to talk to cordond at '{path}': its directory is owned by uid "
            f"{st.st_uid} with mode {st.st_mode & 0o777:04o}, not a private directory of ours "
            f"(uid {euid}, 0700): another user could have planted the socket")
    return fd


def _check_peer(sock: socket.socket, path: str) -> None:
    """Only a daemon of our own uid is believed (as ``cordon`` checks: SO_PEERCRED)."""
    fmt = "3i"
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize(fmt))
    _pid, uid, _gid = struct.unpack(fmt, raw)
    if uid != os.geteuid():
        raise DaemonConnectionError(
            f"'{path}' is served by uid {uid}, not by us (uid {os.geteuid()}): refusing to "
            "talk to it; give socket_path of your own cordond")


def connect_socket(path: Optional[str] = None, timeout: Optional[float] = None) -> socket.socket:
    """A connected socket to cordond, after the directory, socket-file and peer checks. The
    connection goes through /proc/self/fd/N/, N the directory checked: no rename race."""
    path = path or default_socket_path()
    if not isinstance(path, str) or not path.startswith("/"):
        raise DaemonConnectionError(f"socket_path must be an absolute path, not {path!r}")
    fd = _open_private_dir(path)
    sock = None
    try:
        name = os.path.basename(path)
        try:
            st = os.lstat(name, dir_fd=fd)
        except OSError as e:
            raise DaemonConnectionError(_hint(path, e.strerror)) from None
        if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.geteuid():
            raise DaemonConnectionError(f"refusing to talk to cordond at '{path}': it is not a "
                                        f"socket owned by uid {os.geteuid()}")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(f"/proc/self/fd/{fd}/{name}")
        except OSError as e:
            raise DaemonConnectionError(_hint(path, e.strerror or str(e))) from None
        _check_peer(sock, path)
        sock.settimeout(None)
        return sock
    except BaseException:
        if sock is not None:
            sock.close()
        raise
    finally:
        os.close(fd)


def compact(**params: Any) -> Dict[str, Any]:
    """params without those left None (the daemon refuses null where it wants a type)."""
    return {k: v for k, v in params.items() if v is not None}


def encode_request(rid: int, method: str, params: Optional[Dict[str, Any]]) -> bytes:
    req: Dict[str, Any] = {"v": PROTOCOL_VERSION, "id": rid, "method": method}
    if params is not None:
        req["params"] = params
    line = json.dumps(req, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    # Refused here rather than sent: the daemon would answer id 0 and close the connection,
    # failing every other request in flight on it.
    if len(line) > REQUEST_LINE_MAX:
        raise UsageError(f"request line longer than 12 MiB ({method})")
    return line + b"\n"


def parse_line(line: bytes) -> Tuple[int, Dict[str, Any]]:
    """(id, message) of one line from the daemon; ProtocolError when it is not a protocol
    version 1 message (another version's members may mean something else: fail closed)."""
    try:
        msg = json.loads(line)
    except ValueError as e:
        raise ProtocolError(f"cordond sent a line that is not JSON: {e}") from None
    if not isinstance(msg, dict):
        raise ProtocolError("cordond sent a line that is not a JSON object")
    v = msg.get("v")
    if type(v) is not int or v != PROTOCOL_VERSION:
        raise ProtocolError(f"cordond sent a line of protocol version {json.dumps(v)}; this "
                            f"client speaks version {PROTOCOL_VERSION}")
    rid = msg.get("id")
    if type(rid) is not int or rid < 0:
        raise ProtocolError("cordond sent a line without a valid id")
    if "event" in msg and not isinstance(msg["event"], dict):
        raise ProtocolError("cordond sent an event that is not an object")
    if "event" not in msg and "result" not in msg and "error" not in msg:
        raise ProtocolError(f"cordond sent a line for id {rid} with neither result, error nor "
                            "event")
    return rid, msg


def event_bytes(ev: Mapping[str, Any]) -> bytes:
    """The bytes of a stdout/stderr event (text, or base64 with "encoding": "base64")."""
    if ev.get("encoding") == "base64":
        return base64.b64decode(ev["data"])
    return str(ev["data"]).encode("utf-8")


def write_params(session_id: str, path: str, content: Any) -> Dict[str, Any]:
    """fs.write's params: a str as text, bytes as base64."""
    if isinstance(content, str):
        return {"sessionId": session_id, "path": path, "content": content}
    data = bytes(content)
    return {"sessionId": session_id, "path": path,
            "content": base64.b64encode(data).decode("ascii"), "encoding": "base64"}
