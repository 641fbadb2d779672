// SPDX-License-Identifier: Apache-2.0
'use strict';
// cordon-client against a real cordond: session.terminal with terminal.input, terminal.resize and
// terminal.close, and the policy-checked fs.read, fs.write, fs.edit, fs.list, fs.stat with their
// refusals (violation event + PolicyUnenforceableError) and failures (ExecFailedError).
const assert = require('node:assert/strict');
const fs = require('fs');
const path = require('path');
const { describe, it, before, after } = require('node:test');
const cc = require('..');
const { startDaemon, waitUntil, procsWith, marker, killMatching } = require('./harness');

describe('terminals and files', () => {
  let d;
  let c;
  let sid;
  before(async () => {
    d = await startDaemon();
    c = await cc.connect({ socketPath: d.sock });
    const h = await c.launch({ workdir: d.ws });
    assert.equal(h.state, 'warm', JSON.stringify(h));
    sid = h.sessionId;
  });
  after(async () => {
    await c.close();
    const code = await d.stop();
    killMatching(d.sock);
    assert.equal(code, 0, `cordond exits 0: ${d.stderr()}`);
    await d.cleanup();
  });

  /** The terminal's output until it contains `text`. */
  function readUntil(t, text, timeoutMs = 10000) {
    return new Promise((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => { t.off('stdout', on); reject(new Error(`no '${text}' in: ${out}`)); }, timeoutMs);
      function on(b) {
        out += b.toString('utf8');
        if (out.includes(text)) {
          clearTimeout(timer);
          t.off('stdout', on);
          resolve(out);
        }
      }
      t.on('stdout', on);
    });
  }

  it('a native terminal: input, resize, the shell\'s exit status', async () => {
    const t = c.terminal(sid, { backend: 'native', cols: 80, rows: 24 });
    const events = [];
    t.on('event', (ev) => events.push(ev));
    assert.equal(t.terminalId, t.id);
    assert.deepEqual(await t.resize(101, 33), {});
    const seen = readUntil(t, 'rc=1');
    assert.deepEqual(await t.input('stty size; echo x$((6*7)); touch .env; echo rc=$?\n'), {});
    const out = await seen;
    assert.match(out, /33 101/, 'the resize reached the PTY');
    assert.match(out, /x42/, 'the shell ran the input');
    assert.equal(events.find((e) => e.type === 'ready').backend, 'native');
    await t.input('exit 7\n');
    assert.equal((await t.result).exitCode, 7);
    // Checked once the terminal has ended: the refusal (reported by the supervisor) and the
    // shell's "rc=1" (its PTY) come on two channels, in no fixed order, both before the end.
    assert.ok(events.some((e) => e.type === 'violation' && e.target.endsWith('/.env')),
      'the creation rule holds in the terminal');
    assert.ok(!fs.existsSync(path.join(d.ws, '.env')));
  });

  it('the default terminal is the user\'s own shell, and says so', async () => {
    const t = c.terminal(sid);
    const ready = new Promise((r) => t.on('event', (ev) => ev.type === 'ready' && r(ev)));
    const seen = readUntil(t, '/dev/pts/');
    await t.input('tty; exit 0\n');
    await seen;
    assert.equal((await ready).backend, 'none');
    assert.equal((await t.result).exitCode, 0);
  });

  it('terminal.close kills the shell and its children', async () => {
    const m = marker();
    const t = c.terminal(sid, { backend: 'native' });
    await t.input(`sh -c 'sleep 600; : ${m}'\n`);
    assert.ok(await waitUntil(() => procsWith(m).length), 'the shell started sleep');
    assert.deepEqual(await t.close(), {});
    assert.equal((await t.result).exitCode, 137);
    assert.ok(await waitUntil(() => !procsWith(m).length), 'close killed its tree');
    await assert.rejects(c.request('terminal.input', { terminalId: t.id, data: 'x' }),
      (e) => e instanceof cc.UsageError && /no such terminal/.test(e.message));
    await assert.rejects(c.terminal(sid, { cols: 1001 }).result, (e) =>
      e instanceof cc.UsageError && /params.cols/.test(e.message));
  });

  it('fs.write, fs.read, fs.edit, fs.stat, fs.list', async () => {
    const f = path.join(d.ws, 'notes.txt');
    const w = await c.fsWrite(sid, f, 'hello world\n');
    assert.deepEqual([w.path, w.size, w.created], [f, 12, true]);
    assert.equal(fs.readFileSync(f, 'utf8'), 'hello world\n', 'on the host, where commands see it');
    assert.equal((await c.fsWrite(sid, f, 'hello world\n')).created, false);
    const r = await c.fsRead(sid, f);
    assert.deepEqual([r.content, r.encoding, r.size, r.offset, r.eof], ['hello world\n', 'utf-8', 12, 0, true]);
    const part = await c.fsRead(sid, f, { offset: 6, length: 5 });
    assert.deepEqual([part.content, part.eof], ['world', false]);
    const e = await c.fsEdit(sid, f, 'world', 'cordon');
    assert.equal(e.size, 13);
    assert.equal(fs.readFileSync(f, 'utf8'), 'hello cordon\n');
    const bin = Buffer.from([0, 1, 2, 0xff, 0xfe]);
    const b = path.join(d.ws, 'blob.bin');
    assert.equal((await c.fsWrite(sid, b, bin)).size, 5);
    assert.deepEqual(fs.readFileSync(b), bin);
    assert.deepEqual(await c.readFile(sid, b), bin);
    assert.equal((await c.fsRead(sid, b)).encoding, 'base64', 'not UTF-8: base64 by default');
    const st = await c.fsStat(sid, f);
    const mode = (fs.statSync(f).mode & 0o777).toString(8).padStart(4, '0');
    assert.deepEqual([st.type, st.size, st.mode], ['file', 13, mode]);
    assert.match(st.mtime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    fs.mkdirSync(path.join(d.ws, 'dir'), { recursive: true });
    const l = await c.fsList(sid, d.ws);
    const names = l.entries.map((x) => x.name);
    assert.deepEqual(names, [...names].sort(), 'sorted by name');
    assert.ok(names.includes('notes.txt') && names.includes('blob.bin'));
    assert.equal(l.entries.find((x) => x.name === 'dir').type, 'directory');
    assert.equal(l.truncated, false);
    assert.equal((await c.fsList(sid, d.home)).entries.find((x) => x.name === '.ssh').secret, true);
  });

  it('fs refusals are PolicyUnenforceableError after a violation event; failures ExecFailedError', async () => {
    await assert.rejects(c.fsWrite(sid, path.join(d.ws, '.env'), 'A=1'), (e) =>
      e instanceof cc.PolicyUnenforceableError && e.code === 'POLICY_UNENFORCEABLE' &&
      e.events.length === 1 && e.violation.action === 'file-create-name' &&
      e.violation.raw.syscall === 'fs.write');
    assert.ok(!fs.existsSync(path.join(d.ws, '.env')));
    await assert.rejects(c.fsWrite(sid, path.join(d.dir, 'outside'), 'x'), (e) =>
      e instanceof cc.PolicyUnenforceableError && e.violation.raw.rule === 'outside the writable roots');
    assert.ok(!fs.existsSync(path.join(d.dir, 'outside')));
    const key = path.join(d.home, '.ssh', 'id_rsa');
    await assert.rejects(c.fsRead(sid, key), (e) => e instanceof cc.PolicyUnenforceableError &&
      e.violation.action === 'file-read*' && !/PRIVATE/.test(JSON.stringify(e)));
    await assert.rejects(c.fsStat(sid, key), cc.PolicyUnenforceableError);
    await assert.rejects(c.fsRead(sid, path.join(d.ws, 'missing')), (e) =>
      e instanceof cc.ExecFailedError && /No such file or directory/.test(e.message));
    const f = path.join(d.ws, 'twice.txt');
    await c.fsWrite(sid, f, 'a a');
    await assert.rejects(c.fsEdit(sid, f, 'a', 'b'), (e) => e instanceof cc.ExecFailedError &&
      /occurs 2 times/.test(e.message));
    await assert.rejects(c.fsRead(sid, 'relative'), cc.UsageError);
    await assert.rejects(c.fsList('no-such-session', d.ws), cc.UsageError);
  });
});
