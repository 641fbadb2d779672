// SPDX-License-Identifier: Apache-2.0
'use strict';
// cordon-client: a client of cordond, the cordon sandbox daemon (docs/protocol.md in the cordon
// repository). No runtime dependencies; types in index.d.ts.
const { Client, connect, PROTOCOL_VERSION, REQUEST_LINE_MAX } = require('./lib/client');
const { Exec, Terminal, eventBytes } = require('./lib/exec');
const { defaultSocketPath } = require('./lib/socket');
const errors = require('./lib/errors');

module.exports = {
  Client,
  connect,
  Exec,
  Terminal,
  eventBytes,
  defaultSocketPath,
  PROTOCOL_VERSION,
  REQUEST_LINE_MAX,
  CordonError: errors.CordonError,
  UsageError: errors.UsageError,
  PolicyInvalidError: errors.PolicyInvalidError,
  PolicyUnenforceableError: errors.PolicyUnenforceableError,
  SandboxUnavailableError: errors.SandboxUnavailableError,
  LaunchFailedError: errors.LaunchFailedError,
  ExecFailedError: errors.ExecFailedError,
  CommandTimeoutError: errors.CommandTimeoutError,
  KilledError: errors.KilledError,
  DaemonConnectionError: errors.DaemonConnectionError,
  ProtocolError: errors.ProtocolError,
  ERROR_CLASSES: errors.ERROR_CLASSES,
  errorFromWire: errors.errorFromWire,
};
