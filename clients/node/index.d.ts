// SPDX-License-Identifier: Apache-2.0
// Types of cordon-client (index.js): the cordond protocol, version 1 (docs/protocol.md in the
// cordon repository). Within version 1 the daemon may add members and event types: objects
// from the daemon carry an index signature, and code should ignore what it does not know.

import { EventEmitter } from 'events';
import { Socket } from 'net';

/** The protocol version this client speaks (the "v" of every line). */
export const PROTOCOL_VERSION: 1;
/** The longest request line the daemon accepts (without the newline). */
export const REQUEST_LINE_MAX: number;

export type Backend = 'native' | 'landlock' | 'microvm' | 'none';
export type SessionState = 'created' | 'warm' | 'active' | 'suspended' | 'destroyed' | 'error';
export type ErrorCode =
  | 'USAGE'
  | 'POLICY_INVALID'
  | 'POLICY_UNENFORCEABLE'
  | 'SANDBOX_UNAVAILABLE'
  | 'LAUNCH_FAILED'
  | 'EXEC_FAILED'
  | 'TIMEOUT'
  | 'KILLED';

export interface WireError {
  code: ErrorCode;
  message: string;
}

/** A policy document (docs/policy.md); the daemon validates it. */
export type Policy = Record<string, unknown>;

export interface SessionHandle {
  sessionId: string;
  backend: Backend;
  state: SessionState;
  /** null, or why the session is in state `error`. */
  error: WireError | null;
  details: { workdir: string; running: number; [key: string]: unknown };
  [key: string]: unknown;
}

export interface ProbeBackend {
  name: Backend;
  status: 'full' | 'partial' | 'unusable';
  enforces: unknown;
  requiresInstall: unknown;
  hint: string;
  description: string;
  [key: string]: unknown;
}

export interface ProbeResult {
  backends: ProbeBackend[];
  kernel: Record<string, unknown>;
  defaultBackend: Backend;
  /** The secret store cordond uses (docs/design/secrets.md). */
  secrets?: {
    store: 'file' | 'secret-service' | null;
    usable: boolean;
    requiresInstall: boolean;
    detail: string;
    hint: string;
  };
  [key: string]: unknown;
}

interface EventBase {
  sessionId: string;
  /** RFC 3339, UTC, milliseconds. */
  time: string;
  [key: string]: unknown;
}
export interface EscalationEvent extends EventBase { type: 'escalation'; fields: string[]; approved: true }
export interface StartingEvent extends EventBase { type: 'starting'; backend: Backend | 'auto' }
export interface ReadyEvent extends EventBase { type: 'ready'; backend: Backend }
export interface ViolationEvent extends EventBase {
  type: 'violation';
  action: string;
  target: string;
  raw: { syscall: string; rule: string; count?: number };
}
export interface OutputEvent extends EventBase {
  type: 'stdout' | 'stderr';
  /** Text, or base64 when `encoding` is "base64" (eventBytes() decodes both). */
  data: string;
  encoding?: 'base64';
}
export interface ExitEvent extends EventBase { type: 'exit'; exitCode: number; signal?: number }
export interface KilledEvent extends EventBase { type: 'killed'; reason: 'oom' | 'timeout' | 'manual' }
export interface ErrorEvent extends EventBase { type: 'error'; code: ErrorCode; message: string }
export type ExecEvent =
  | EscalationEvent
  | StartingEvent
  | ReadyEvent
  | ViolationEvent
  | OutputEvent
  | ExitEvent
  | KilledEvent
  | ErrorEvent;

export interface ExecResult {
  exitCode: number;
  backend: Backend;
  violations: number;
  /** true when the command ran in the session's warm sandbox. */
  warm?: boolean;
  [key: string]: unknown;
}

export interface RunResult extends ExecResult {
  stdout: string;
  stderr: string;
  /** Every event but the output. */
  events: ExecEvent[];
  /** More than maxOutput bytes were written; the rest was not kept. */
  outputTruncated: boolean;
}

export interface ConnectOptions {
  /** The socket; default: defaultSocketPath(). */
  socketPath?: string;
  /** Bytes of events waiting in iterators before the client stops reading (default 16 MiB). */
  highWaterMark?: number;
}

export interface LaunchOptions {
  policy?: Policy;
  backend?: Backend | 'docker' | 'auto';
  /** Absolute; default: the daemon's $HOME. */
  workdir?: string;
}

export interface ExecOptions {
  cwd?: string;
  env?: Record<string, string>;
  /** The whole standard input: UTF-8 text without NUL, at most 1 MiB. */
  stdin?: string;
  policyOverride?: Policy;
  escalationApproved?: boolean;
  /** The user approved this command line: what an "ask" rule of commandPolicy names runs. */
  commandApproved?: boolean;
}

export interface RunOptions extends ExecOptions {
  /** stdout + stderr bytes kept (default 64 MiB). */
  maxOutput?: number;
}

export interface TerminalOptions {
  cols?: number;
  rows?: number;
  /** "none" (the default: the user's own shell, unconfined) or "native" (inside the sandbox). */
  backend?: 'none' | 'native';
  argv?: string[];
}

export interface FsReadOptions {
  encoding?: 'utf-8' | 'base64';
  offset?: number;
  length?: number;
}

export interface FsReadResult {
  path: string;
  content: string;
  encoding: 'utf-8' | 'base64';
  size: number;
  offset: number;
  eof: boolean;
  [key: string]: unknown;
}
export interface FsWriteResult { path: string; size: number; created: boolean; [key: string]: unknown }
export interface FsEditResult { path: string; size: number; [key: string]: unknown }
export type FileType = 'file' | 'directory' | 'symlink' | 'fifo' | 'socket' | 'char-device' | 'block-device';
export interface FsStatResult {
  path: string;
  type: FileType;
  size: number;
  /** Octal permission bits, e.g. "0644". */
  mode: string;
  /** RFC 3339, milliseconds. */
  mtime: string;
  mtimeNs: number;
  [key: string]: unknown;
}
export interface FsListEntry {
  /** Absent for a name that is not UTF-8: then nameBase64. */
  name?: string;
  nameBase64?: string;
  type: FileType;
  size: number;
  mode: string;
  mtime: string;
  mtimeNs: number;
  /** A secret, shown as the sandbox shows it: present, size 0. */
  secret?: boolean;
  [key: string]: unknown;
}
export interface FsListResult { path: string; entries: FsListEntry[]; truncated: boolean; [key: string]: unknown }

export class CordonError extends Error {
  constructor(code: string, message: string, info?: { events?: ExecEvent[]; requestId?: number });
  /** One of ErrorCode (a code this client does not know is kept as it came). */
  code: ErrorCode | string;
  /** The events before the error response (an exec's, a refused fs call's violation). */
  events: ExecEvent[];
  /** The request's id; 0 for an error not tied to one request. */
  requestId: number;
  /** The first violation event, if any. */
  readonly violation: ViolationEvent | undefined;
}
type ErrorInfo = { events?: ExecEvent[]; requestId?: number };
export class UsageError extends CordonError { constructor(message: string, info?: ErrorInfo); code: 'USAGE' }
export class PolicyInvalidError extends CordonError { constructor(message: string, info?: ErrorInfo); code: 'POLICY_INVALID' }
export class PolicyUnenforceableError extends CordonError { constructor(message: string, info?: ErrorInfo); code: 'POLICY_UNENFORCEABLE' }
export class SandboxUnavailableError extends CordonError { constructor(message: string, info?: ErrorInfo); code: 'SANDBOX_UNAVAILABLE' }
export class LaunchFailedError extends CordonError { constructor(message: string, info?: ErrorInfo); code: 'LAUNCH_FAILED' }
export class ExecFailedError extends CordonError { constructor(message: string, info?: ErrorInfo); code: 'EXEC_FAILED' }
/** TIMEOUT: the policy's limits.timeout expired. */
export class CommandTimeoutError extends CordonError { constructor(message: string, info?: ErrorInfo); code: 'TIMEOUT' }
export class KilledError extends CordonError { constructor(message: string, info?: ErrorInfo); code: 'KILLED' }
/** The connection failed, was refused by the client's checks, or ended. */
export class DaemonConnectionError extends LaunchFailedError {}
/** The daemon sent a line that is not a protocol version 1 message for a request of ours. */
export class ProtocolError extends LaunchFailedError {}
export const ERROR_CLASSES: Readonly<Record<ErrorCode, typeof CordonError>>;
export function errorFromWire(err: WireError, info?: ErrorInfo): CordonError;

/** The bytes of a stdout/stderr event. */
export function eventBytes(ev: OutputEvent): Buffer;
/** $XDG_RUNTIME_DIR/cordon/cordond.sock, else /run/user/cordon-UID/..., else /tmp/cordon-UID/... */
export function defaultSocketPath(env?: Record<string, string | undefined>): string;

export class Exec extends EventEmitter implements AsyncIterable<ExecEvent> {
  /** The request's id. */
  readonly id: number;
  /** The response: resolves with the result, rejects with a CordonError subclass. */
  readonly result: Promise<ExecResult>;
  /** Events from the moment the iterator is taken; ends with the response (throws its error). */
  [Symbol.asyncIterator](): AsyncIterator<ExecEvent>;
  on(event: 'event', listener: (ev: ExecEvent) => void): this;
  on(event: 'stdout' | 'stderr', listener: (data: Buffer) => void): this;
  on(event: 'end', listener: () => void): this;
  once(event: 'event', listener: (ev: ExecEvent) => void): this;
  once(event: 'stdout' | 'stderr', listener: (data: Buffer) => void): this;
  once(event: 'end', listener: () => void): this;
  off(event: 'event', listener: (ev: ExecEvent) => void): this;
  off(event: 'stdout' | 'stderr', listener: (data: Buffer) => void): this;
  off(event: 'end', listener: () => void): this;
}

export class Terminal extends Exec {
  readonly terminalId: number;
  input(data: string): Promise<Record<string, never>>;
  resize(cols: number, rows: number): Promise<Record<string, never>>;
  /** Kills the shell; its result then has exitCode 137. */
  close(): Promise<Record<string, never>>;
}

export class Client extends EventEmitter {
  static connect(options?: ConnectOptions): Promise<Client>;
  constructor(sock: Socket, options?: ConnectOptions);
  /** Any method, raw: resolves with its result; rejects with a typed error. */
  request<T = unknown>(method: string, params?: Record<string, unknown>,
    options?: { onEvent?: (ev: ExecEvent) => void }): Promise<T>;
  probe(): Promise<ProbeResult>;
  /** Resolves with the handle in state `warm` or `error` (a failed launch is not a rejection). */
  launch(options?: LaunchOptions): Promise<SessionHandle>;
  exec(sessionId: string, argv: string[], options?: ExecOptions): Exec;
  run(sessionId: string, argv: string[], options?: RunOptions): Promise<RunResult>;
  list(): Promise<SessionHandle[]>;
  destroy(sessionId: string): Promise<SessionHandle>;
  suspend(sessionId: string): Promise<SessionHandle>;
  resume(sessionId: string): Promise<SessionHandle>;
  /** session.egressAnswer: answers an exec's egress.ask event (its `id`). */
  egressAnswer(sessionId: string, id: number, answer: 'allow-once' | 'allow-session' | 'deny'): Promise<SessionHandle>;
  terminal(sessionId: string, options?: TerminalOptions): Terminal;
  fsRead(sessionId: string, path: string, options?: FsReadOptions): Promise<FsReadResult>;
  readFile(sessionId: string, path: string, options?: { offset?: number; length?: number }): Promise<Buffer>;
  fsWrite(sessionId: string, path: string, content: string | Uint8Array): Promise<FsWriteResult>;
  fsEdit(sessionId: string, path: string, oldString: string, newString: string): Promise<FsEditResult>;
  fsList(sessionId: string, path: string): Promise<FsListResult>;
  fsStat(sessionId: string, path: string): Promise<FsStatResult>;
  /** Ends the connection: the daemon kills this connection's execs and terminals. */
  close(): Promise<void>;
  on(event: 'close', listener: (err: CordonError) => void): this;
  once(event: 'close', listener: (err: CordonError) => void): this;
}

export function connect(options?: ConnectOptions): Promise<Client>;
