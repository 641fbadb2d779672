// SPDX-License-Identifier: Apache-2.0
'use strict';
// One running session.exec or session.terminal: its events as an EventEmitter and as an async
// iterator, its response as a promise.
const { EventEmitter } = require('events');

/** The bytes of a stdout/stderr event (text, or base64 with "encoding": "base64"). */
function eventBytes(ev) {
  return ev.encoding === 'base64' ? Buffer.from(ev.data, 'base64') : Buffer.from(ev.data, 'utf8');
}

/**
 * Emits 'event' (every event object, as docs/protocol.md "Events" describes), 'stdout' and
 * 'stderr' (a Buffer per chunk) and 'end' (after the response). `result` resolves with the
 * response's result ({exitCode, backend, violations, warm?}) or rejects with the typed error.
 *
 * Async iteration yields the events that arrive from the moment the iterator is created (take it
 * before the next `await`, as with events.on()), then ends when the response comes, throwing the
 * typed error if it is an error. Events that wait in the iterator's queue count towards the
 * client's highWaterMark: beyond it the client stops reading the socket until the iterator
 * catches up, the daemon's queue then fills and it pauses the command (docs/protocol.md,
 * "Limits"): a slow consumer slows the command instead of growing memory.
 */
class Exec extends EventEmitter {
  constructor(client, id) {
    super();
    this.id = id;
    this._client = client;
    this._iter = null; // {queue, bytes, wake} once an iterator is taken
    this._outcome = null; // {error} or {result}
    this.result = new Promise((resolve, reject) => {
      this._resolve = resolve;
      this._reject = reject;
    });
    // A caller that only iterates, or only listens, must not crash the process with an
    // unhandled rejection; whoever awaits `result` still gets the error.
    this.result.catch(() => {});
  }

  _event(ev, size) {
    this.emit('event', ev);
    if ((ev.type === 'stdout' || ev.type === 'stderr') && typeof ev.data === 'string')
      this.emit(ev.type, eventBytes(ev));
    const it = this._iter;
    if (it && !it.closed) {
      it.queue.push({ ev, size });
      it.bytes += size;
      this._client._queued(size);
      this._wake();
    }
  }

  _finish(error, result) {
    this._outcome = error ? { error } : { result };
    if (error) this._reject(error);
    else this._resolve(result);
    this._wake();
    this.emit('end');
  }

  _wake() {
    const it = this._iter;
    if (it && it.wake) {
      const w = it.wake;
      it.wake = null;
      w();
    }
  }

  _drop() {
    const it = this._iter;
    if (!it) return;
    it.closed = true;
    this._client._queued(-it.bytes);
    it.queue = [];
    it.bytes = 0;
  }

  [Symbol.asyncIterator]() {
    if (this._iter) throw new TypeError('an Exec can be iterated only once');
    const it = (this._iter = { queue: [], bytes: 0, wake: null, closed: false, thrown: false });
    const next = async () => {
      for (;;) {
        if (it.closed) return { value: undefined, done: true };
        if (it.queue.length) {
          const { ev, size } = it.queue.shift();
          it.bytes -= size;
          this._client._queued(-size);
          return { value: ev, done: false };
        }
        if (this._outcome) {
          it.closed = true;
          if (this._outcome.error) throw this._outcome.error;
          return { value: undefined, done: true };
        }
        await new Promise((r) => (it.wake = r));
      }
    };
    return {
      next,
      return: async () => {
        this._drop();
        return { value: undefined, done: true };
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }
}

/**
 * A session.terminal: an Exec whose events are the PTY's, plus the three requests that drive
 * it. Only the connection that opened it may drive it; closing the connection kills the shell.
 */
class Terminal extends Exec {
  get terminalId() {
    return this.id;
  }

  /** Writes UTF-8 text (at most 64 KiB per call) to the PTY; resolves once written. */
  input(data) {
    return this._client.request('terminal.input', { terminalId: this.id, data });
  }

  resize(cols, rows) {
    return this._client.request('terminal.resize', { terminalId: this.id, cols, rows });
  }

  /** Kills the shell; the terminal's result then has exitCode 137. */
  close() {
    return this._client.request('terminal.close', { terminalId: this.id });
  }
}

module.exports = { Exec, Terminal, eventBytes };
