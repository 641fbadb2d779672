// SPDX-License-Identifier: Apache-2.0
'use strict';
// cordon-client: a client of cordond, the cordon sandbox daemon (docs/protocol.md in the cordon
// repository). No runtime dependencies; types in index.d.ts.
const { Client, connect, PROTOCOL_VERSION, REQUEST_LINE_MAX } = require('./lib/client');
const { Exec, Terminal, eventBytes } = require('./lib/exec');
const { defaultSocketPath } = require('./lib/socket');
const errors = require('./lib/errors');

// One `exports.NAME =` per name: Node's ESM loader finds them, so `import { connect } from
// 'cordon-client'` works as well as require().
exports.Client = Client;
exports.connect = connect;
exports.Exec = Exec;
exports.Terminal = Terminal;
exports.eventBytes = eventBytes;
exports.defaultSocketPath = defaultSocketPath;
exports.PROTOCOL_VERSION = PROTOCOL_VERSION;
exports.REQUEST_LINE_MAX = REQUEST_LINE_MAX;
exports.CordonError = errors.CordonError;
exports.UsageError = errors.UsageError;
exports.PolicyInvalidError = errors.PolicyInvalidError;
exports.PolicyUnenforceableError = errors.PolicyUnenforceableError;
exports.SandboxUnavailableError = errors.SandboxUnavailableError;
exports.LaunchFailedError = errors.LaunchFailedError;
exports.ExecFailedError = errors.ExecFailedError;
exports.CommandTimeoutError = errors.CommandTimeoutError;
exports.KilledError = errors.KilledError;
exports.DaemonConnectionError = errors.DaemonConnectionError;
exports.ProtocolError = errors.ProtocolError;
exports.ERROR_CLASSES = errors.ERROR_CLASSES;
exports.errorFromWire = errors.errorFromWire;
