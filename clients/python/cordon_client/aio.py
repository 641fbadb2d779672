# SPDX-License-Identifier: Apache-2.0
"""The asyncio cordond client: the surface of the sync Client with coroutines. One reader task
per connection hands each line to the request it answers."""
import asyncio
from typing import Any, AsyncIterator, Dict, List, Optional, Sequence, Union

from . import _wire
from .client import EVENTS_KEPT, RunResult, _Collector
from .errors import CordonError, DaemonConnectionError, ProtocolError, error_from_wire, rebind


class AsyncExec:
    """A running session.exec: ``async for ev in ex`` for its events (the iteration ends with
    the response and raises its typed error if it is one), or ``await ex.wait()``."""

    def __init__(self, client: "AsyncClient", rid: int, queue: "asyncio.Queue[Any]") -> None:
        self._client = client
        self._queue = queue
        self.id = rid
        self.events: List[Dict[str, Any]] = []  # the non-output events seen (bounded)
        self.result: Optional[Dict[str, Any]] = None
        self.error: Optional[CordonError] = None
        self._done = False

    def __aiter__(self) -> AsyncIterator[Dict[str, Any]]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Dict[str, Any]]:
        while True:
            ev = await self.next_event()
            if ev is None:
                return
            yield ev

    async def next_event(self) -> Optional[Dict[str, Any]]:
        """The next event; None once the response came (raising its error if it is one)."""
        if self._done:
            if self.error is not None:
                raise self.error
            return None
        item = await self._queue.get()
        if isinstance(item, CordonError):  # the connection ended
            self._done = True
            self.error = rebind(item, events=self.events, request_id=self.id)
            raise self.error
        if "event" in item:
            ev = item["event"]
            if ev.get("type") not in ("stdout", "stderr") and len(self.events) < EVENTS_KEPT:
                self.events.append(ev)
            return ev
        self._done = True
        if "error" in item:
            self.error = error_from_wire(item["error"], events=self.events, request_id=self.id)
            raise self.error
        self.result = item["result"]
        return None

    async def wait(self) -> Dict[str, Any]:
        """Reads the remaining events and returns the result (raises the typed error)."""
        async for _ in self:
            pass
        assert self.result is not None
        return self.result


class AsyncTerminal(AsyncExec):
    """A session.terminal, driven by input/resize/close (as Terminal of the sync client)."""

    @property
    def terminal_id(self) -> int:
        return self.id

    async def input(self, data: str) -> Dict[str, Any]:
        return await self._client.request("terminal.input", {"terminalId": self.id, "data": data})

    async def resize(self, cols: int, rows: int) -> Dict[str, Any]:
        return await self._client.request("terminal.resize",
                                          {"terminalId": self.id, "cols": cols, "rows": rows})

    async def close(self) -> Dict[str, Any]:
        return await self._client.request("terminal.close", {"terminalId": self.id})


class AsyncClient:
    """A connection to cordond; ``await AsyncClient.connect(socket_path)``."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._next_id = 1
        self._queues: Dict[int, "asyncio.Queue[Any]"] = {}
        self._closed: Optional[CordonError] = None
        self._task = asyncio.get_running_loop().create_task(self._read_loop())

    @classmethod
    async def connect(cls, socket_path: Optional[str] = None) -> "AsyncClient":
        """Connects after the checks of the sync client (a private directory of ours, a socket
        of ours, SO_PEERCRED); the blocking part is a local connect()."""
        sock = _wire.connect_socket(socket_path, 10.0)
        try:
            reader, writer = await asyncio.open_unix_connection(
                sock=sock, limit=_wire.RESPONSE_LINE_MAX)
        except BaseException:
            sock.close()
            raise
        return cls(reader, writer)

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def _read_loop(self) -> None:
        err: CordonError
        try:
            while True:
                try:
                    line = await self._reader.readuntil(b"\n")
                except asyncio.IncompleteReadError:
                    err = DaemonConnectionError("cordond closed the connection")
                    break
                except asyncio.LimitOverrunError:
                    err = ProtocolError("cordond sent a line longer than "
                                        f"{_wire.RESPONSE_LINE_MAX} bytes")
                    break
                if not line.strip():
                    continue
                rid, msg = _wire.parse_line(line)
                if rid == 0:
                    # A request of ours it could not parse far enough to answer by id.
                    err = error_from_wire(msg.get("error"))
                    break
                q = self._queues.get(rid)
                if q is None:
                    err = ProtocolError(f"cordond answered id {rid}, which is not in flight")
                    break
                if "event" not in msg:
                    del self._queues[rid]
                q.put_nowait(msg)
        except CordonError as e:
            err = e
        except (OSError, asyncio.CancelledError) as e:
            err = DaemonConnectionError(f"the connection to cordond failed: {e!r}")
        self._fail(err)

    def _fail(self, err: CordonError) -> None:
        if self._closed is None:
            self._closed = err
        for q in self._queues.values():
            q.put_nowait(self._closed)
        self._queues.clear()
        self._writer.close()

    def _start(self, method: str, params: Optional[Dict[str, Any]]) -> "tuple[int, asyncio.Queue[Any]]":
        if self._closed is not None:
            raise rebind(self._closed, events=[], request_id=0)
        rid = self._next_id
        self._next_id += 1
        line = _wire.encode_request(rid, method, params)
        q: "asyncio.Queue[Any]" = asyncio.Queue()
        self._queues[rid] = q
        self._writer.write(line)
        return rid, q

    async def request(self, method: str, params: Optional[Dict[str, Any]] = None) -> Any:
        """Any method: its result, or its typed error (with the events that came first)."""
        rid, q = self._start(method, params)
        await self._writer.drain()
        events: List[Dict[str, Any]] = []
        while True:
            item = await q.get()
            if isinstance(item, CordonError):
                raise rebind(item, events=events, request_id=rid)
            if "event" in item:
                events.append(item["event"])
                continue
            if "error" in item:
                raise error_from_wire(item["error"], events=events, request_id=rid)
            return item["result"]

    async def probe(self) -> Dict[str, Any]:
        return await self.request("probe")

    async def launch(self, *, policy: Optional[Dict[str, Any]] = None,
                     backend: Optional[str] = None,
                     workdir: Optional[str] = None) -> Dict[str, Any]:
        """session.launch: the handle, in state ``warm`` or ``error`` (not an exception)."""
        return await self.request("session.launch",
                                  _wire.compact(policy=policy, backend=backend, workdir=workdir))

    def exec(self, session_id: str, argv: Sequence[str], *, cwd: Optional[str] = None,
             env: Optional[Dict[str, str]] = None, stdin: Optional[str] = None,
             policy_override: Optional[Dict[str, Any]] = None,
             escalation_approved: Optional[bool] = None,
             command_approved: Optional[bool] = None) -> AsyncExec:
        """session.exec: an AsyncExec at once (not a coroutine: the request is sent now)."""
        params = _wire.compact(sessionId=session_id, argv=list(argv), cwd=cwd, env=env,
                               stdin=stdin, policyOverride=policy_override,
                               escalationApproved=escalation_approved,
                               commandApproved=command_approved)
        return AsyncExec(self, *self._start("session.exec", params))

    async def run(self, session_id: str, argv: Sequence[str], *, max_output: int = 64 << 20,
                  **options: Any) -> RunResult:
        """session.exec, collected (as Client.run)."""
        ex = self.exec(session_id, argv, **options)
        c = _Collector(max_output)
        async for ev in ex:
            c.add(ev)
        assert ex.result is not None
        return c.result(ex.result)

    async def list(self) -> List[Dict[str, Any]]:
        return (await self.request("session.list"))["sessions"]

    async def destroy(self, session_id: str) -> Dict[str, Any]:
        return await self.request("session.destroy", {"sessionId": session_id})

    async def suspend(self, session_id: str) -> Dict[str, Any]:
        return await self.request("session.suspend", {"sessionId": session_id})

    async def resume(self, session_id: str) -> Dict[str, Any]:
        return await self.request("session.resume", {"sessionId": session_id})

    async def egress_answer(self, session_id: str, ask_id: int, answer: str) -> Dict[str, Any]:
        """session.egressAnswer (Client.egress_answer)."""
        return await self.request("session.egressAnswer",
                                  {"sessionId": session_id, "id": ask_id, "answer": answer})

    def terminal(self, session_id: str, *, cols: int = 80, rows: int = 24,
                 backend: Optional[str] = None,
                 argv: Optional[Sequence[str]] = None) -> AsyncTerminal:
        params = _wire.compact(sessionId=session_id, cols=cols, rows=rows, backend=backend,
                               argv=list(argv) if argv is not None else None)
        return AsyncTerminal(self, *self._start("session.terminal", params))

    async def fs_read(self, session_id: str, path: str, *, encoding: Optional[str] = None,
                      offset: Optional[int] = None,
                      length: Optional[int] = None) -> Dict[str, Any]:
        return await self.request("fs.read", _wire.compact(
            sessionId=session_id, path=path, encoding=encoding, offset=offset, length=length))

    async def read_file(self, session_id: str, path: str, *, offset: Optional[int] = None,
                        length: Optional[int] = None) -> bytes:
        r = await self.fs_read(session_id, path, encoding="base64", offset=offset, length=length)
        return _wire.event_bytes({"data": r["content"], "encoding": "base64"})

    async def fs_write(self, session_id: str, path: str,
                       content: Union[str, bytes]) -> Dict[str, Any]:
        return await self.request("fs.write", _wire.write_params(session_id, path, content))

    async def fs_edit(self, session_id: str, path: str, old_string: str,
                      new_string: str) -> Dict[str, Any]:
        return await self.request("fs.edit", {"sessionId": session_id, "path": path,
                                              "oldString": old_string, "newString": new_string})

    async def fs_list(self, session_id: str, path: str) -> Dict[str, Any]:
        return await self.request("fs.list", {"sessionId": session_id, "path": path})

    async def fs_stat(self, session_id: str, path: str) -> Dict[str, Any]:
        return await self.request("fs.stat", {"sessionId": session_id, "path": path})

    async def close(self) -> None:
        """Ends the connection: the daemon kills this connection's execs and terminals."""
        self._fail(DaemonConnectionError("the client closed the connection"))
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            pass
        try:
            await self._writer.wait_closed()
        except OSError:
            pass
