# SPDX-License-Identifier: Apache-2.0
"""The synchronous cordond client: one connection, requests matched to responses by id, the
events of session.exec and session.terminal streamed to an Exec. Thread-safe: any thread may
wait on any request; whichever needs the next line reads it and hands it to its owner."""
import collections
import socket
import threading
from dataclasses import dataclass, field
from typing import Any, Deque, Dict, Iterator, List, Optional, Sequence, Union

from . import _wire
from .errors import (CordonError, DaemonConnectionError, ProtocolError, error_from_wire,
                     rebind)

EVENTS_KEPT = 1024  # the non-output events a typed error of an exec carries


@dataclass
class RunResult:
    """run(): the exec's result with its output collected."""
    exit_code: int
    backend: str
    violations: int
    warm: bool
    stdout: str
    stderr: str
    events: List[Dict[str, Any]] = field(default_factory=list)  # all but the output
    output_truncated: bool = False  # more than max_output bytes were written: not kept
    result: Dict[str, Any] = field(default_factory=dict)  # the response's result as sent


class _Call:
    """One request in flight: its queued lines (events, then the response)."""

    def __init__(self, rid: int) -> None:
        self.id = rid
        self.lines: Deque[Dict[str, Any]] = collections.deque()


class Exec:
    """A running session.exec: iterate it for its events (the iteration ends with the response
    and raises its typed error if it is one), or wait() for its result."""

    def __init__(self, client: "Client", call: _Call) -> None:
        self._client = client
        self._call = call
        self.id = call.id
        self.events: List[Dict[str, Any]] = []  # the non-output events seen (bounded)
        self.result: Optional[Dict[str, Any]] = None
        self.error: Optional[CordonError] = None
        self._done = False

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        while True:
            ev = self.next_event()
            if ev is None:
                return
            yield ev

    def next_event(self) -> Optional[Dict[str, Any]]:
        """The next event; None once the response came (raising its error if it is one)."""
        if self._done:
            if self.error is not None:
                raise self.error
            return None
        msg = self._client._next(self._call, self.events)
        if "event" in msg:
            ev = msg["event"]
            if ev.get("type") not in ("stdout", "stderr") and len(self.events) < EVENTS_KEPT:
                self.events.append(ev)
            return ev
        self._done = True
        if "error" in msg:
            self.error = error_from_wire(msg["error"], events=self.events, request_id=self.id)
            raise self.error
        self.result = msg["result"]
        return None

    def wait(self) -> Dict[str, Any]:
        """Reads the remaining events and returns the result (raises the typed error)."""
        for _ in self:
            pass
        assert self.result is not None
        return self.result


class Terminal(Exec):
    """A session.terminal: its events are the PTY's; input/resize/close drive it. Only the
    connection that opened it may; closing the connection kills the shell."""

    @property
    def terminal_id(self) -> int:
        return self.id

    def input(self, data: str) -> Dict[str, Any]:
        """Writes UTF-8 text (at most 64 KiB per call) to the PTY."""
        return self._client.request("terminal.input", {"terminalId": self.id, "data": data})

    def resize(self, cols: int, rows: int) -> Dict[str, Any]:
        return self._client.request("terminal.resize",
                                    {"terminalId": self.id, "cols": cols, "rows": rows})

    def close(self) -> Dict[str, Any]:
        """Kills the shell; the terminal's result then has exitCode 137."""
        return self._client.request("terminal.close", {"terminalId": self.id})


class Client:
    """A connection to cordond (socket_path, else default_socket_path())."""

    def __init__(self, socket_path: Optional[str] = None, *,
                 connect_timeout: Optional[float] = 10.0) -> None:
        self._sock = _wire.connect_socket(socket_path, connect_timeout)
        self._buf = bytearray()
        self._next_id = 1
        self._calls: Dict[int, _Call] = {}
        self._cv = threading.Condition(threading.Lock())
        self._send_lock = threading.Lock()
        self._reading = False
        self._closed: Optional[CordonError] = None

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- the wire ----------------------------------------------------------------------------

    def _start(self, method: str, params: Optional[Dict[str, Any]]) -> _Call:
        with self._cv:
            if self._closed is not None:
                raise rebind(self._closed, events=[], request_id=0)
            rid = self._next_id
            self._next_id += 1
            line = _wire.encode_request(rid, method, params)
            call = self._calls[rid] = _Call(rid)
        try:
            with self._send_lock:
                self._sock.sendall(line)
        except OSError as e:
            self._fail(DaemonConnectionError(f"cannot send the request to cordond: {e}"))
        return call

    def _read_line(self) -> bytes:
        """The next line from the socket (called by one thread at a time, without the lock)."""
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                line = bytes(self._buf[:nl])
                del self._buf[:nl + 1]
                if line.strip():
                    return line
                continue
            if len(self._buf) > _wire.RESPONSE_LINE_MAX:
                raise ProtocolError(f"cordond sent a line longer than {_wire.RESPONSE_LINE_MAX} "
                                    "bytes")
            chunk = self._sock.recv(1 << 20)
            if not chunk:
                raise DaemonConnectionError("cordond closed the connection")
            self._buf += chunk

    def _dispatch(self, line: bytes) -> None:
        """Hands one line to its call (with the lock held)."""
        rid, msg = _wire.parse_line(line)
        if rid == 0:
            # A request of ours it could not parse far enough to answer by id: none can be
            # trusted any more.
            raise error_from_wire(msg.get("error"))
        call = self._calls.get(rid)
        if call is None:
            raise ProtocolError(f"cordond answered id {rid}, which is not in flight")
        if "event" not in msg:
            del self._calls[rid]
        call.lines.append(msg)

    def _next(self, call: _Call, events: List[Dict[str, Any]]) -> Dict[str, Any]:
        """The next line of call: queued, or read from the socket by this thread."""
        with self._cv:
            while True:
                if call.lines:
                    return call.lines.popleft()
                if self._closed is not None:
                    raise rebind(self._closed, events=events, request_id=call.id)
                if self._reading:
                    self._cv.wait()
                    continue
                self._reading = True
                self._cv.release()
                try:
                    line: Optional[bytes] = self._read_line()
                    err: Optional[CordonError] = None
                except CordonError as e:
                    line, err = None, e
                except OSError as e:
                    line, err = None, DaemonConnectionError(
                        f"the connection to cordond failed: {e}")
                finally:
                    self._cv.acquire()
                    self._reading = False
                    self._cv.notify_all()
                if line is not None:
                    try:
                        self._dispatch(line)
                    except CordonError as e:
                        err = e
                if err is not None:
                    self._fail_locked(err)

    def _fail_locked(self, err: CordonError) -> None:
        if self._closed is None:
            self._closed = err
            self._calls.clear()
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._cv.notify_all()

    def _fail(self, err: CordonError) -> None:
        with self._cv:
            self._fail_locked(err)

    # ---- requests ----------------------------------------------------------------------------

    def request(self, method: str, params: Optional[Dict[str, Any]] = None) -> Any:
        """Any method of docs/protocol.md: its result, or its typed error (whose ``events``
        are the events that came first)."""
        call = self._start(method, params)
        events: List[Dict[str, Any]] = []
        while True:
            msg = self._next(call, events)
            if "event" in msg:
                events.append(msg["event"])
                continue
            if "error" in msg:
                raise error_from_wire(msg["error"], events=events, request_id=call.id)
            return msg["result"]

    def probe(self) -> Dict[str, Any]:
        return self.request("probe")

    def launch(self, *, policy: Optional[Dict[str, Any]] = None, backend: Optional[str] = None,
               workdir: Optional[str] = None) -> Dict[str, Any]:
        """session.launch: the handle, in state ``warm`` or ``error`` (a failed launch is a
        handle whose ``error`` says why, not an exception; error_from_wire() makes it one)."""
        return self.request("session.launch", _wire.compact(policy=policy, backend=backend,
                                                            workdir=workdir))

    def exec(self, session_id: str, argv: Sequence[str], *, cwd: Optional[str] = None,
             env: Optional[Dict[str, str]] = None, stdin: Optional[str] = None,
             policy_override: Optional[Dict[str, Any]] = None,
             escalation_approved: Optional[bool] = None,
             command_approved: Optional[bool] = None) -> Exec:
        """session.exec: an Exec, at once (its events stream, its response ends them)."""
        params = _wire.compact(sessionId=session_id, argv=list(argv), cwd=cwd, env=env,
                               stdin=stdin, policyOverride=policy_override,
                               escalationApproved=escalation_approved,
                               commandApproved=command_approved)
        return Exec(self, self._start("session.exec", params))

    def run(self, session_id: str, argv: Sequence[str], *, max_output: int = 64 << 20,
            **options: Any) -> RunResult:
        """session.exec, collected: the result with stdout and stderr (UTF-8, invalid bytes
        replaced); raises the typed error as Exec does."""
        ex = self.exec(session_id, argv, **options)
        return collect(ex, iter(ex), max_output)

    def list(self) -> List[Dict[str, Any]]:
        return self.request("session.list")["sessions"]

    def destroy(self, session_id: str) -> Dict[str, Any]:
        return self.request("session.destroy", {"sessionId": session_id})

    def suspend(self, session_id: str) -> Dict[str, Any]:
        return self.request("session.suspend", {"sessionId": session_id})

    def resume(self, session_id: str) -> Dict[str, Any]:
        return self.request("session.resume", {"sessionId": session_id})

    def egress_answer(self, session_id: str, ask_id: int, answer: str) -> Dict[str, Any]:
        """session.egressAnswer: answers the egress.ask event `ask_id` of an exec's stream with
        "allow-once", "allow-session" or "deny"; the egress.answer event says what came of it."""
        return self.request("session.egressAnswer",
                            {"sessionId": session_id, "id": ask_id, "answer": answer})

    def terminal(self, session_id: str, *, cols: int = 80, rows: int = 24,
                 backend: Optional[str] = None, argv: Optional[Sequence[str]] = None) -> Terminal:
        params = _wire.compact(sessionId=session_id, cols=cols, rows=rows, backend=backend,
                               argv=list(argv) if argv is not None else None)
        return Terminal(self, self._start("session.terminal", params))

    def fs_read(self, session_id: str, path: str, *, encoding: Optional[str] = None,
                offset: Optional[int] = None, length: Optional[int] = None) -> Dict[str, Any]:
        return self.request("fs.read", _wire.compact(sessionId=session_id, path=path,
                                                     encoding=encoding, offset=offset,
                                                     length=length))

    def read_file(self, session_id: str, path: str, *, offset: Optional[int] = None,
                  length: Optional[int] = None) -> bytes:
        """fs.read, the bytes of the part read."""
        r = self.fs_read(session_id, path, encoding="base64", offset=offset, length=length)
        return _wire.event_bytes({"data": r["content"], "encoding": "base64"})

    def fs_write(self, session_id: str, path: str, content: Union[str, bytes]) -> Dict[str, Any]:
        """fs.write: a str is written as text, bytes as they are (base64 on the wire)."""
        return self.request("fs.write", _wire.write_params(session_id, path, content))

    def fs_edit(self, session_id: str, path: str, old_string: str,
                new_string: str) -> Dict[str, Any]:
        return self.request("fs.edit", {"sessionId": session_id, "path": path,
                                        "oldString": old_string, "newString": new_string})

    def fs_list(self, session_id: str, path: str) -> Dict[str, Any]:
        return self.request("fs.list", {"sessionId": session_id, "path": path})

    def fs_stat(self, session_id: str, path: str) -> Dict[str, Any]:
        return self.request("fs.stat", {"sessionId": session_id, "path": path})

    def close(self) -> None:
        """Ends the connection: the daemon kills this connection's execs and terminals
        (sessions stay); whatever waits on them raises DaemonConnectionError."""
        self._fail(DaemonConnectionError("the client closed the connection"))
        self._sock.close()


class _Collector:
    """What run() keeps of an exec's events (shared by the sync and asyncio clients)."""

    def __init__(self, max_output: int) -> None:
        self.max = max_output
        self.kept = 0
        self.out: Dict[str, List[bytes]] = {"stdout": [], "stderr": []}
        self.events: List[Dict[str, Any]] = []
        self.truncated = False

    def add(self, ev: Dict[str, Any]) -> None:
        kind = ev.get("type")
        if kind not in ("stdout", "stderr"):
            self.events.append(ev)
            return
        b = _wire.event_bytes(ev)
        if self.kept + len(b) > self.max:
            self.truncated = True
            return
        self.kept += len(b)
        self.out[kind].append(b)

    def result(self, r: Dict[str, Any]) -> RunResult:
        return RunResult(exit_code=r["exitCode"], backend=r.get("backend", ""),
                         violations=r.get("violations", 0), warm=bool(r.get("warm", False)),
                         stdout=b"".join(self.out["stdout"]).decode("utf-8", "replace"),
                         stderr=b"".join(self.out["stderr"]).decode("utf-8", "replace"),
                         events=self.events, output_truncated=self.truncated, result=r)


def collect(ex: Exec, events: Iterator[Dict[str, Any]], max_output: int) -> RunResult:
    c = _Collector(max_output)
    for ev in events:
        c.add(ev)
    assert ex.result is not None
    return c.result(ex.result)
