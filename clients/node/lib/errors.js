// SPDX-License-Identifier: Apache-2.0
'use strict';
// The error codes of docs/protocol.md ("Errors"), one class each, so that a harness can
// `catch (e) { if (e instanceof PolicyUnenforceableError) ... }` or switch on `e.code`. The set is
// closed (cordon_code in include/cordon/cordon.h); a code this client does not know still becomes
// a CordonError with that code, never a success.

class CordonError extends Error {
  /**
   * @param {string} code  one of the protocol's codes
   * @param {string} message  the daemon's one line for people
   * @param {{events?: object[], requestId?: number}} [info]
   */
  constructor(code, message, info = {}) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    // The events that came before the error response: an exec's, or the `violation` event of a
    // refused fs.* call.
    this.events = info.events || [];
    this.requestId = info.requestId || 0;
  }

  /** The first `violation` event of the request, or undefined. */
  get violation() {
    return this.events.find((e) => e && e.type === 'violation');
  }
}

class UsageError extends CordonError {
  constructor(message, info) { super('USAGE', message, info); }
}
class PolicyInvalidError extends CordonError {
  constructor(message, info) { super('POLICY_INVALID', message, info); }
}
class PolicyUnenforceableError extends CordonError {
  constructor(message, info) { super('POLICY_UNENFORCEABLE', message, info); }
}
class SandboxUnavailableError extends CordonError {
  constructor(message, info) { super('SANDBOX_UNAVAILABLE', message, info); }
}
class LaunchFailedError extends CordonError {
  constructor(message, info) { super('LAUNCH_FAILED', message, info); }
}
class ExecFailedError extends CordonError {
  constructor(message, info) { super('EXEC_FAILED', message, info); }
}
/** TIMEOUT: the policy's limits.timeout expired (not a client-side timeout). */
class CommandTimeoutError extends CordonError {
  constructor(message, info) { super('TIMEOUT', message, info); }
}
class KilledError extends CordonError {
  constructor(message, info) { super('KILLED', message, info); }
}

/**
 * The connection to cordond failed, was refused by the client's own checks (a socket another
 * user could have planted), or ended while requests were in flight. Code LAUNCH_FAILED, as the
 * `cordon` CLI reports the same failures.
 */
class DaemonConnectionError extends LaunchFailedError {}
/** cordond sent something that is not a protocol version 1 message for a request of ours. */
class ProtocolError extends LaunchFailedError {}

const ERROR_CLASSES = Object.freeze({
  USAGE: UsageError,
  POLICY_INVALID: PolicyInvalidError,
  POLICY_UNENFORCEABLE: PolicyUnenforceableError,
  SANDBOX_UNAVAILABLE: SandboxUnavailableError,
  LAUNCH_FAILED: LaunchFailedError,
  EXEC_FAILED: ExecFailedError,
  TIMEOUT: CommandTimeoutError,
  KILLED: KilledError,
});

/** The typed error for an `error` member {code, message} (of a response or a handle). */
function errorFromWire(err, info) {
  const code = err && typeof err.code === 'string' ? err.code : 'LAUNCH_FAILED';
  const message = err && typeof err.message === 'string' ? err.message : 'cordond sent no message';
  const Cls = Object.prototype.hasOwnProperty.call(ERROR_CLASSES, code) ? ERROR_CLASSES[code] : null;
  return Cls ? new Cls(message, info) : new CordonError(code, message, info);
}

module.exports = {
  CordonError,
  UsageError,
  PolicyInvalidError,
  PolicyUnenforceableError,
  SandboxUnavailableError,
  LaunchFailedError,
  ExecFailedError,
  CommandTimeoutError,
  KilledError,
  DaemonConnectionError,
  ProtocolError,
  ERROR_CLASSES,
  errorFromWire,
};
