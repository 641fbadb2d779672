// SPDX-License-Identifier: Apache-2.0
'use strict';
// A client of cordond (docs/protocol.md): one connection, newline-delimited JSON, requests
// matched to responses by id, session.exec events streamed to an Exec.
const { EventEmitter } = require('events');
const errors = require('./errors');
const { Exec, Terminal, eventBytes } = require('./exec');
const { defaultSocketPath, connectSocket } = require('./socket');

/** The protocol version this client speaks: the "v" of every line, both ways. */
const PROTOCOL_VERSION = 1;
/** docs/protocol.md, "Framing": a longer request makes the daemon close the connection. */
const REQUEST_LINE_MAX = 12 * 1024 * 1024;
/** The longest line accepted from the daemon (an fs.read of 8 MiB in base64 is ~11 MiB). */
const RESPONSE_LINE_MAX = 64 * 1024 * 1024;
const DEFAULT_HIGH_WATER_MARK = 16 * 1024 * 1024;

/** params without the members left undefined (the daemon refuses null where it wants a type). */
function compact(obj) {
  const out = {};
  for (const [k, v] of Object.entries(obj)) if (v !== undefined) out[k] = v;
  return out;
}

class Client extends EventEmitter {
  /**
   * Connects to cordond: options.socketPath, else the default path (defaultSocketPath()).
   * options.highWaterMark: bytes of events waiting in iterators before the client stops reading.
   */
  static async connect(options = {}) {
    const sock = await connectSocket(options.socketPath || defaultSocketPath());
    return new Client(sock, options);
  }

  constructor(sock, options = {}) {
    super();
    this._sock = sock;
    this._nextId = 1;
    this._pending = new Map(); // id -> {events, onEvent?, exec?, finish(err, result)}
    this._chunks = [];
    this._chunkBytes = 0;
    this._closed = null; // the error pending requests get once the connection is gone
    this._queuedBytes = 0;
    this._highWaterMark = options.highWaterMark || DEFAULT_HIGH_WATER_MARK;
    this._paused = false;
    sock.on('data', (chunk) => this._onData(chunk));
    sock.on('error', (e) => this._fail(new errors.DaemonConnectionError(
      `the connection to cordond failed: ${e.message}`)));
    sock.on('close', () => this._fail(new errors.DaemonConnectionError(
      'cordond closed the connection')));
  }

  // ---- the wire ----------------------------------------------------------------------------

  _onData(chunk) {
    if (this._closed) return; // what comes after a failure or close() belongs to no request
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      this._chunks.push(chunk.subarray(start, nl));
      const line = Buffer.concat(this._chunks);
      this._chunks = [];
      this._chunkBytes = 0;
      start = nl + 1;
      if (line.length) this._onLine(line);
      if (this._closed) return;
    }
    if (start < chunk.length) {
      this._chunks.push(chunk.subarray(start));
      this._chunkBytes += chunk.length - start;
      if (this._chunkBytes > RESPONSE_LINE_MAX)
        this._protocolError(`cordond sent a line longer than ${RESPONSE_LINE_MAX} bytes`);
    }
  }

  _protocolError(why) {
    this._fail(new errors.ProtocolError(why));
    this._sock.destroy();
  }

  _onLine(line) {
    let msg;
    try {
      msg = JSON.parse(line.toString('utf8'));
    } catch (e) {
      return this._protocolError(`cordond sent a line that is not JSON: ${e.message}`);
    }
    if (msg === null || typeof msg !== 'object' || Array.isArray(msg))
      return this._protocolError('cordond sent a line that is not a JSON object');
    // Fail closed on another version: its members may mean something else (docs/protocol.md,
    // "Framing and versioning").
    if (msg.v !== PROTOCOL_VERSION)
      return this._protocolError(`cordond sent a line of protocol version ${JSON.stringify(msg.v)}; ` +
        `this client speaks version ${PROTOCOL_VERSION}`);
    if (!Number.isSafeInteger(msg.id) || msg.id < 0)
      return this._protocolError('cordond sent a line without a valid id');
    if (msg.id === 0) {
      // A request of ours it could not parse far enough to answer by id: none can be trusted.
      const e = errors.errorFromWire(msg.error);
      this._fail(e);
      this._sock.destroy();
      return undefined;
    }
    const p = this._pending.get(msg.id);
    if (!p) return this._protocolError(`cordond answered id ${msg.id}, which is not in flight`);
    if ('event' in msg) return this._dispatchEvent(p, msg.event, line.length);
    this._pending.delete(msg.id);
    if ('error' in msg) return p.finish(errors.errorFromWire(msg.error,
      { events: p.events, requestId: msg.id }), undefined);
    if ('result' in msg) return p.finish(null, msg.result);
    return this._protocolError(`cordond sent a line for id ${msg.id} with neither result, error ` +
      'nor event');
  }

  _dispatchEvent(p, ev, size) {
    if (ev === null || typeof ev !== 'object' || Array.isArray(ev))
      return this._protocolError('cordond sent an event that is not an object');
    if (!p.exec || (ev.type !== 'stdout' && ev.type !== 'stderr' && p.events.length < 1024))
      p.events.push(ev);
    if (p.onEvent) p.onEvent(ev);
    if (p.exec) p.exec._event(ev, size);
    return undefined;
  }

  /** Iterators' queues grow and shrink by `delta` bytes: pause or resume reading. */
  _queued(delta) {
    this._queuedBytes += delta;
    if (!this._paused && this._queuedBytes > this._highWaterMark) {
      this._paused = true;
      this._sock.pause();
    } else if (this._paused && this._queuedBytes <= this._highWaterMark / 2) {
      this._paused = false;
      this._sock.resume();
    }
  }

  _fail(err) {
    if (this._closed) return;
    this._closed = err;
    const pending = [...this._pending.entries()];
    this._pending.clear();
    for (const [id, p] of pending) {
      const info = { events: p.events, requestId: id };
      const local = err instanceof errors.DaemonConnectionError || err instanceof errors.ProtocolError;
      p.finish(local ? new err.constructor(err.message, info) : errors.errorFromWire(err, info),
        undefined);
    }
    this.emit('close', err);
  }

  /** Sends one request; `pending` gets its events and its response. Returns the id. */
  _send(method, params, pending) {
    if (this._closed) throw this._closed;
    const id = this._nextId++;
    const req = { v: PROTOCOL_VERSION, id, method };
    if (params !== undefined) req.params = params;
    const line = JSON.stringify(req);
    // Refused here rather than sent: the daemon would answer id 0 and close the connection,
    // failing every other request in flight on it.
    if (Buffer.byteLength(line, 'utf8') > REQUEST_LINE_MAX)
      throw new errors.UsageError(`request line longer than 12 MiB (${method})`);
    this._pending.set(id, pending);
    this._sock.write(line + '\n');
    return id;
  }

  // ---- requests ----------------------------------------------------------------------------

  /**
   * Any method of docs/protocol.md: resolves with its result, rejects with the typed error
   * (whose `events` are the events that came first). options.onEvent(ev) sees each event.
   */
  request(method, params, options = {}) {
    return new Promise((resolve, reject) => {
      this._send(method, params, {
        events: [],
        onEvent: options.onEvent,
        finish: (err, result) => (err ? reject(err) : resolve(result)),
      });
    });
  }

  _startStream(Cls, method, params) {
    const exec = new Cls(this, this._nextId); // _send assigns exactly this id
    this._send(method, params, {
      exec,
      events: [], // the events a typed error carries: all but the output, at most 1024
      finish: (err, result) => exec._finish(err, result),
    });
    return exec;
  }

  probe() {
    return this.request('probe');
  }

  /** session.launch: resolves with the handle, in state `warm` or `error` (not an exception). */
  launch(options = {}) {
    return this.request('session.launch', compact({
      policy: options.policy, backend: options.backend, workdir: options.workdir,
    }));
  }

  /**
   * session.exec: returns an Exec at once (its events stream; its `result` is the response).
   * options: cwd, env, stdin, policyOverride, escalationApproved, commandApproved.
   */
  exec(sessionId, argv, options = {}) {
    return this._startStream(Exec, 'session.exec', compact({
      sessionId, argv, cwd: options.cwd, env: options.env, stdin: options.stdin,
      policyOverride: options.policyOverride, escalationApproved: options.escalationApproved,
      commandApproved: options.commandApproved,
    }));
  }

  /**
   * session.exec, collected: resolves with the result plus `stdout`, `stderr` (decoded as UTF-8),
   * `events` and `outputTruncated` (more than options.maxOutput bytes, default 64 MiB, were
   * written: the rest was not kept). Rejects with the typed error as exec() does.
   */
  async run(sessionId, argv, options = {}) {
    const max = options.maxOutput === undefined ? 64 * 1024 * 1024 : options.maxOutput;
    const out = { stdout: [], stderr: [] };
    let kept = 0;
    let truncated = false;
    const events = [];
    const ex = this.exec(sessionId, argv, options);
    ex.on('event', (ev) => {
      if (ev.type !== 'stdout' && ev.type !== 'stderr') return events.push(ev);
      const b = eventBytes(ev);
      if (kept + b.length > max) return (truncated = true);
      kept += b.length;
      out[ev.type].push(b);
      return undefined;
    });
    const result = await ex.result;
    return {
      ...result,
      stdout: Buffer.concat(out.stdout).toString('utf8'),
      stderr: Buffer.concat(out.stderr).toString('utf8'),
      events,
      outputTruncated: truncated,
    };
  }

  list() {
    return this.request('session.list').then((r) => r.sessions);
  }

  destroy(sessionId) {
    return this.request('session.destroy', { sessionId });
  }

  suspend(sessionId) {
    return this.request('session.suspend', { sessionId });
  }

  resume(sessionId) {
    return this.request('session.resume', { sessionId });
  }

  /** session.egressAnswer: answers the egress.ask event `id` of an exec's stream with
   * 'allow-once', 'allow-session' or 'deny'; the egress.answer event says what came of it. */
  egressAnswer(sessionId, id, answer) {
    return this.request('session.egressAnswer', { sessionId, id, answer });
  }

  /** session.terminal: a Terminal (options: cols, rows (default 80x24), backend, argv). */
  terminal(sessionId, options = {}) {
    return this._startStream(Terminal, 'session.terminal', compact({
      sessionId, cols: options.cols || 80, rows: options.rows || 24,
      backend: options.backend, argv: options.argv,
    }));
  }

  /** fs.read; options: encoding ('utf-8' | 'base64'), offset, length. */
  fsRead(sessionId, path, options = {}) {
    return this.request('fs.read', compact({
      sessionId, path, encoding: options.encoding, offset: options.offset, length: options.length,
    }));
  }

  /** fs.read, the bytes: resolves with a Buffer of the part read (options: offset, length). */
  async readFile(sessionId, path, options = {}) {
    const r = await this.fsRead(sessionId, path, { ...options, encoding: 'base64' });
    return Buffer.from(r.content, 'base64');
  }

  /** fs.write: a string is written as text, a Buffer/Uint8Array as its bytes (base64). */
  fsWrite(sessionId, path, content) {
    if (typeof content === 'string') return this.request('fs.write', { sessionId, path, content });
    const b64 = Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('base64');
    return this.request('fs.write', { sessionId, path, content: b64, encoding: 'base64' });
  }

  fsEdit(sessionId, path, oldString, newString) {
    return this.request('fs.edit', { sessionId, path, oldString, newString });
  }

  fsList(sessionId, path) {
    return this.request('fs.list', { sessionId, path });
  }

  fsStat(sessionId, path) {
    return this.request('fs.stat', { sessionId, path });
  }

  /**
   * Ends the connection. The daemon then kills every exec and terminal this connection started
   * (sessions stay); their promises reject with DaemonConnectionError.
   */
  close() {
    if (!this._closed)
      this._fail(new errors.DaemonConnectionError('the client closed the connection'));
    return new Promise((resolve) => {
      if (this._sock.destroyed) return resolve();
      this._sock.once('close', () => resolve());
      this._sock.end(() => this._sock.destroy());
      return undefined;
    });
  }
}

/** Client.connect(options). */
function connect(options) {
  return Client.connect(options);
}

module.exports = { Client, connect, PROTOCOL_VERSION, REQUEST_LINE_MAX, compact };
