# SPDX-License-Identifier: Apache-2.0
"""cordon_client: a client of cordond, the cordon sandbox daemon (docs/protocol.md of the cordon
repository), standard library only. ``Client`` is synchronous (and thread-safe),
``AsyncClient`` the same surface for asyncio."""
from ._wire import PROTOCOL_VERSION, REQUEST_LINE_MAX, default_socket_path, event_bytes
from .aio import AsyncClient, AsyncExec, AsyncTerminal
from .client import Client, Exec, RunResult, Terminal
from .errors import (ERROR_CLASSES, CommandTimeoutError, CordonError, DaemonConnectionError,
                     ExecFailedError, KilledError, LaunchFailedError, PolicyInvalidError,
                     PolicyUnenforceableError, ProtocolError, SandboxUnavailableError,
                     UsageError, error_from_wire)

__version__ = "1.0.0"  # the major version is the protocol version

__all__ = [
    "PROTOCOL_VERSION", "REQUEST_LINE_MAX", "default_socket_path", "event_bytes",
    "Client", "Exec", "Terminal", "RunResult", "AsyncClient", "AsyncExec", "AsyncTerminal",
    "CordonError", "UsageError", "PolicyInvalidError", "PolicyUnenforceableError",
    "SandboxUnavailableError", "LaunchFailedError", "ExecFailedError", "CommandTimeoutError",
    "KilledError", "DaemonConnectionError", "ProtocolError", "ERROR_CLASSES", "error_from_wire",
    "__version__",
]
