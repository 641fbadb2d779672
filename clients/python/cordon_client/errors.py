# SPDX-License-Identifier: Apache-2.0
"""Typed errors for the codes of docs/protocol.md ("Errors"): one class per code, so a harness
can ``except PolicyUnenforceableError`` or look at ``e.code``. The set is closed (cordon_code in
include/cordon/cordon.h); a code this client does not know still becomes a CordonError with that
code, never a success."""
from typing import Any, Dict, List, Mapping, Optional


class CordonError(Exception):
    """An error response of cordond, or a failure of the connection to it.

    ``code``: one of the protocol's codes; ``message``: the daemon's line for people;
    ``events``: the events that came before the error response (an exec's, the ``violation``
    of a refused fs call); ``request_id``: the request's id (0 when not tied to one)."""

    code = "LAUNCH_FAILED"

    def __init__(self, message: str, *, code: Optional[str] = None,
                 events: Optional[List[Dict[str, Any]]] = None, request_id: int = 0) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message
        self.events: List[Dict[str, Any]] = events if events is not None else []
        self.request_id = request_id

    @property
    def violation(self) -> Optional[Dict[str, Any]]:
        """The first ``violation`` event, or None."""
        for ev in self.events:
            if ev.get("type") == "violation":
                return ev
        return None

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class UsageError(CordonError):
    code = "USAGE"


class PolicyInvalidError(CordonError):
    code = "POLICY_INVALID"


class PolicyUnenforceableError(CordonError):
    code = "POLICY_UNENFORCEABLE"


class SandboxUnavailableError(CordonError):
    code = "SANDBOX_UNAVAILABLE"


class LaunchFailedError(CordonError):
    code = "LAUNCH_FAILED"


class ExecFailedError(CordonError):
    code = "EXEC_FAILED"


class CommandTimeoutError(CordonError):
    """TIMEOUT: the policy's limits.timeout expired (not a client-side timeout)."""
    code = "TIMEOUT"


class KilledError(CordonError):
    code = "KILLED"


class DaemonConnectionError(LaunchFailedError):
    """The connection to cordond failed, was refused by the client's own checks (a socket
    another user could have planted), or ended with requests in flight. Code LAUNCH_FAILED, as
    the ``cordon`` CLI reports the same failures."""


class ProtocolError(LaunchFailedError):
    """cordond sent something that is not a protocol version 1 message for a request of ours."""


ERROR_CLASSES: Mapping[str, type] = {
    cls.code: cls for cls in (UsageError, PolicyInvalidError, PolicyUnenforceableError,
                              SandboxUnavailableError, LaunchFailedError, ExecFailedError,
                              CommandTimeoutError, KilledError)
}


def error_from_wire(err: Any, *, events: Optional[List[Dict[str, Any]]] = None,
                    request_id: int = 0) -> CordonError:
    """The typed error for an ``error`` member {code, message} (of a response or a handle)."""
    code = err.get("code") if isinstance(err, dict) else None
    message = err.get("message") if isinstance(err, dict) else None
    if not isinstance(code, str):
        code = "LAUNCH_FAILED"
    if not isinstance(message, str):
        message = "cordond sent no message"
    cls = ERROR_CLASSES.get(code)
    if cls is None:
        return CordonError(message, code=code, events=events, request_id=request_id)
    return cls(message, events=events, request_id=request_id)


def rebind(err: CordonError, *, events: List[Dict[str, Any]], request_id: int) -> CordonError:
    """A copy of err (same class and code) for one request in flight."""
    return type(err)(err.message, code=err.code, events=events, request_id=request_id)
