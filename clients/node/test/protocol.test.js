// SPDX-License-Identifier: Apache-2.0
'use strict';
// cordon-client against a real cordond: the protocol version, socket discovery and the
// private-directory check, probe, the session lifecycle, exec streaming (iterator and
// EventEmitter), every error code a session method answers mapped to its class, concurrent execs,
// a disconnect mid-exec, a daemon that dies mid-exec, backpressure, an oversize request.
const assert = require('node:assert/strict');
const fs = require('fs');
const net = require('net');
const path = require('path');
const { describe, it, before, after } = require('node:test');
const cc = require('..');
const { startDaemon, waitUntil, procsWith, marker, killMatching, sleep, BASE } = require('./harness');

const SOURCE = process.env.CORDON_SOURCE_DIR || path.resolve(__dirname, '../../..');

describe('protocol version', () => {
  let d;
  before(async () => { d = await startDaemon(); });
  after(async () => assert.equal(await d.cleanup(), 0, 'cordond exits 0'));

  it('is the daemon\'s PROTO_VERSION', () => {
    const h = fs.readFileSync(path.join(SOURCE, 'src/daemon/protocol.h'), 'utf8');
    const m = /#define PROTO_VERSION (\d+)/.exec(h);
    assert.ok(m, 'PROTO_VERSION in src/daemon/protocol.h');
    assert.equal(cc.PROTOCOL_VERSION, Number(m[1]));
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'));
    assert.equal(Number(pkg.version.split('.')[0]), cc.PROTOCOL_VERSION,
      'the package\'s major version is the protocol version');
  });

  it('is the one the daemon speaks (its refusal of another names it)', async () => {
    const c = await cc.connect({ socketPath: d.sock });
    const s = c._sock; // a raw line of another version, through the same connection
    const line = new Promise((resolve) => s.once('data', (b) => resolve(b.toString())));
    s.write(JSON.stringify({ v: cc.PROTOCOL_VERSION + 1, id: 99, method: 'probe' }) + '\n');
    // The client rejects the line as unrequested (id 99 is not its own) after we read it.
    const text = await line;
    const msg = JSON.parse(text.split('\n')[0]);
    assert.equal(msg.v, cc.PROTOCOL_VERSION);
    assert.equal(msg.error.code, 'USAGE');
    assert.match(msg.error.message, new RegExp(`protocol version ${cc.PROTOCOL_VERSION}\\b`));
    await c.close();
  });

  it('is checked on every line the daemon sends', async () => {
    // A fake daemon in a private directory of ours answering with "v": 2.
    const dir = fs.mkdtempSync(path.join(BASE, 'cordon-node-fake-'));
    const sock = path.join(dir, 'fake.sock');
    const server = net.createServer((conn) => conn.on('data', (b) => {
      for (const line of b.toString().split('\n').filter(Boolean)) {
        const req = JSON.parse(line);
        conn.write(JSON.stringify({ v: 2, id: req.id, result: { backends: [], sessions: [] } }) + '\n');
      }
    }));
    await new Promise((r) => server.listen(sock, r));
    let c;
    try {
      c = await cc.connect({ socketPath: sock });
      await assert.rejects(c.probe(), (e) => e instanceof cc.ProtocolError &&
        e.code === 'LAUNCH_FAILED' && /protocol version 2/.test(e.message));
      await assert.rejects(c.list(), cc.ProtocolError, 'the connection is not used again');
    } finally {
      if (c) await c.close();
      server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('socket discovery and the private-directory check', () => {
  it('defaultSocketPath follows docs/protocol.md', () => {
    assert.equal(cc.defaultSocketPath({ XDG_RUNTIME_DIR: '/run/user/7' }),
      '/run/user/7/cordon/cordond.sock');
    let base = '/tmp';
    try { fs.accessSync('/run/user', fs.constants.W_OK); base = '/run/user'; } catch (_) { /* */ }
    const uid = process.getuid();
    for (const env of [{}, { XDG_RUNTIME_DIR: '' }, { XDG_RUNTIME_DIR: 'relative/dir' }])
      assert.equal(cc.defaultSocketPath(env), `${base}/cordon-${uid}/cordond.sock`, JSON.stringify(env));
  });

  it('connect() without a path finds a daemon started without --socket', async () => {
    const rt = fs.mkdtempSync(path.join(BASE, 'cordon-node-xdg-'));
    const d = await startDaemon({ socket: false, env: { XDG_RUNTIME_DIR: rt },
      socketPath: path.join(rt, 'cordon', 'cordond.sock') });
    const saved = process.env.XDG_RUNTIME_DIR;
    process.env.XDG_RUNTIME_DIR = rt;
    try {
      const c = await cc.connect();
      assert.ok(Array.isArray((await c.probe()).backends));
      await c.close();
    } finally {
      if (saved === undefined) delete process.env.XDG_RUNTIME_DIR;
      else process.env.XDG_RUNTIME_DIR = saved;
      assert.equal(await d.cleanup(), 0);
      fs.rmSync(rt, { recursive: true, force: true });
    }
  });

  it('refuses a socket another user could have planted, and a missing one', async () => {
    const d = await startDaemon();
    try {
      const run = path.dirname(d.sock);
      fs.chmodSync(run, 0o755); // cordond's directory made enterable by others
      await assert.rejects(cc.connect({ socketPath: d.sock }), (e) =>
        e instanceof cc.DaemonConnectionError && /not a private directory of ours/.test(e.message));
      fs.chmodSync(run, 0o700);
      const link = path.join(d.dir, 'link');
      fs.symlinkSync(run, link); // a symlinked directory: not what was checked
      await assert.rejects(cc.connect({ socketPath: path.join(link, 'cordond.sock') }),
        (e) => e instanceof cc.DaemonConnectionError && /symlink/.test(e.message));
      await assert.rejects(cc.connect({ socketPath: path.join(run, 'nothing.sock') }),
        (e) => e instanceof cc.DaemonConnectionError && /No such file/.test(e.message));
      await assert.rejects(cc.connect({ socketPath: 'relative.sock' }), cc.DaemonConnectionError);
      if (process.getuid() === 0) {
        // As root: a private directory of another uid (the impersonation of /tmp/cordon-UID).
        const other = 65534; // nobody
        fs.chownSync(run, other, other);
        await assert.rejects(cc.connect({ socketPath: d.sock }), (e) =>
          e instanceof cc.DaemonConnectionError && /owned by uid 65534/.test(e.message));
        fs.chownSync(run, 0, 0);
      }
      const c = await cc.connect({ socketPath: d.sock }); // restored: accepted
      await c.probe();
      await c.close();
    } finally {
      assert.equal(await d.cleanup(), 0);
    }
  });
});

describe('sessions and execs', () => {
  let d;
  let c;
  before(async () => {
    d = await startDaemon();
    c = await cc.connect({ socketPath: d.sock });
  });
  after(async () => {
    await c.close();
    const code = await d.stop();
    killMatching(d.sock); // what a failed test left running (after the daemon, which matches)
    assert.equal(code, 0, `cordond exits 0: ${d.stderr()}`);
    await d.cleanup();
  });

  async function warm(options = {}) {
    const h = await c.launch({ workdir: d.ws, ...options });
    assert.equal(h.state, 'warm', JSON.stringify(h));
    return h.sessionId;
  }

  it('probe', async () => {
    const p = await c.probe();
    assert.deepEqual(new Set(p.backends.map((b) => b.name)),
      new Set(['native', 'landlock', 'microvm', 'none']));
    assert.ok(p.kernel);
    assert.ok(['native', 'landlock', 'microvm', 'none'].includes(p.defaultBackend));
  });

  it('launch, list, destroy', async () => {
    const h = await c.launch({ workdir: d.ws });
    assert.equal(h.state, 'warm');
    assert.match(h.sessionId, /^s-[0-9a-f]{24}$/);
    assert.deepEqual(h.details, { workdir: d.ws, running: 0 });
    const named = await warm({ policy: { sessionId: 'node-7' } });
    assert.equal(named, 'node-7');
    const ids = (await c.list()).map((x) => x.sessionId);
    assert.deepEqual(ids.slice(0, 2), ['node-7', h.sessionId], 'newest first');
    const gone = await c.destroy(h.sessionId);
    assert.equal(gone.state, 'destroyed');
    assert.ok(!(await c.list()).some((x) => x.sessionId === h.sessionId));
    await assert.rejects(c.destroy(h.sessionId), (e) => e instanceof cc.UsageError &&
      e.code === 'USAGE' && /no such session/.test(e.message));
    await c.destroy('node-7');
  });

  it('a failed launch is a handle in state error, not an exception', async () => {
    const h = await c.launch({ workdir: d.ws, policy: { mode: 'bogus' } });
    assert.equal(h.state, 'error');
    assert.equal(h.error.code, 'POLICY_INVALID');
    const e = cc.errorFromWire(h.error);
    assert.ok(e instanceof cc.PolicyInvalidError);
    await assert.rejects(c.run(h.sessionId, ['true']), (x) => x instanceof cc.UsageError &&
      /the session failed to start/.test(x.message));
    assert.equal((await c.destroy(h.sessionId)).state, 'destroyed');
  });

  it('exec streams events to an iterator and to listeners, then its result', async () => {
    const sid = await warm();
    const ex = c.exec(sid, ['sh', '-c', 'echo out; echo err >&2; cat; pwd; echo $FOO; printf "\\377"; exit 3'],
      { stdin: 'from stdin \u00e9\n', env: { FOO: 'bar baz' } });
    const heard = [];
    ex.on('stdout', (b) => heard.push(b));
    const types = [];
    const stdout = [];
    for await (const ev of ex) {
      types.push(ev.type);
      assert.equal(ev.sessionId, sid);
      if (ev.type === 'stdout') stdout.push(cc.eventBytes(ev));
    }
    assert.deepEqual(types.slice(0, 2), ['starting', 'ready']);
    assert.equal(types[types.length - 1], 'exit');
    const want = Buffer.concat([Buffer.from(`out\nfrom stdin \u00e9\n${d.ws}\nbar baz\n`), Buffer.from([0xff])]);
    assert.deepEqual(Buffer.concat(stdout), want, 'text and base64 chunks decoded');
    assert.deepEqual(Buffer.concat(heard), want, 'the same through the EventEmitter');
    const r = await ex.result;
    assert.equal(r.exitCode, 3);
    assert.equal(r.backend, 'native');
    assert.equal(r.violations, 0);
    assert.equal(r.warm, true);
    const sub = path.join(d.ws, 'sub');
    fs.mkdirSync(sub, { recursive: true });
    const run = await c.run(sid, ['sh', '-c', 'pwd; echo e >&2; kill -KILL $$'], { cwd: sub });
    assert.equal(run.stdout, `${sub}\n`);
    assert.equal(run.stderr, 'e\n');
    assert.equal(run.exitCode, 128 + 9);
    assert.equal(run.events[run.events.length - 1].type, 'exit');
  });

  it('a refusal inside the sandbox is a violation event', async () => {
    const sid = await warm({ policy: { denyCreateNames: ['*.secret'] } });
    const r = await c.run(sid, ['sh', '-c', 'echo x > a.secret; echo rc=$?']);
    assert.notEqual(r.stdout, 'rc=0\n');
    assert.ok(r.events.some((e) => e.type === 'violation' && e.action === 'file-create-name'));
    assert.ok(r.violations >= 1);
    assert.ok(!fs.existsSync(path.join(d.ws, 'a.secret')));
  });

  it('error codes map to typed errors carrying their events', async () => {
    const sid = await warm();
    await assert.rejects(c.run(sid, ['/nonexistent/cmd']), (e) => e instanceof cc.ExecFailedError &&
      e.code === 'EXEC_FAILED' && /cannot execute/.test(e.message) &&
      e.events[e.events.length - 1].type === 'error' && e.requestId > 0);
    await assert.rejects(c.run('no-such-session', ['true']), (e) => e instanceof cc.UsageError &&
      e.events.length === 0);
    await assert.rejects(c.request('session.exec', { sessionId: sid, argv: ['true'], timeout: 5 }),
      (e) => e instanceof cc.UsageError && /unknown member "timeout"/.test(e.message));
    await assert.rejects(c.request('session.bogus'), cc.UsageError);
    const wider = { bindMounts: [{ hostPath: d.dir, guestPath: d.dir, readOnly: false }] };
    await assert.rejects(c.run(sid, ['true'], { policyOverride: wider }), (e) =>
      e instanceof cc.PolicyInvalidError && /escalationApproved/.test(e.message));
    const esc = await c.run(sid, ['true'], { policyOverride: wider, escalationApproved: true });
    assert.equal(esc.events[0].type, 'escalation');
    const asks = await warm({ policy: { commandPolicy: [{ command: 'echo asked', action: 'ask' }] } });
    await assert.rejects(c.run(asks, ['echo', 'asked']), (e) => e instanceof cc.ExecFailedError &&
      /needs approval for 'echo asked'/.test(e.message) && /commandApproved/.test(e.message));
    assert.equal((await c.run(asks, ['echo', 'asked'], { commandApproved: true })).stdout, 'asked\n');
    const slow = await warm({ policy: { limits: { timeout: '1s' } } });
    await assert.rejects(c.run(slow, ['sleep', '30']), (e) => e instanceof cc.CommandTimeoutError &&
      e.code === 'TIMEOUT' && e.events.some((x) => x.type === 'killed' && x.reason === 'timeout'));
    const none = (await c.launch({ workdir: d.ws, backend: 'none' })).sessionId;
    const t = c.terminal(none, { backend: 'native' });
    await assert.rejects(t.result, (e) => e instanceof cc.SandboxUnavailableError &&
      /terminals need/.test(e.message));
    await assert.rejects(c.fsWrite(sid, path.join(d.ws, '.env'), 'A=1'), (e) =>
      e instanceof cc.PolicyUnenforceableError && e.violation.action === 'file-create-name');
    const m = marker();
    const victim = c.exec(sid, ['sleep', m]);
    assert.ok(await waitUntil(() => procsWith(m).length), 'the command started');
    await c.destroy(sid);
    await assert.rejects(victim.result, (e) => e instanceof cc.KilledError &&
      /the session was destroyed/.test(e.message));
    // Iterating an exec that fails ends by throwing its error.
    const it = c.exec(none, ['/nonexistent/cmd']);
    const seen = [];
    await assert.rejects((async () => { for await (const ev of it) seen.push(ev.type); })(),
      cc.ExecFailedError);
    assert.equal(seen[seen.length - 1], 'error');
  });

  it('the landlock backend: cold execs, the same events, errors and refusals', async (t) => {
    const probe = await c.probe();
    if (probe.backends.find((b) => b.name === 'landlock').status === 'unusable')
      return t.skip('landlock is unusable on this host');
    const h = await c.launch({ workdir: d.ws, backend: 'landlock', policy: { denyCreateNames: ['*.secret'] } });
    assert.deepEqual([h.state, h.backend], ['warm', 'landlock'], JSON.stringify(h));
    const r = await c.run(h.sessionId, ['sh', '-c', 'echo hi; echo x > a.secret; echo rc=$?']);
    assert.equal(r.backend, 'landlock');
    assert.equal(r.warm, undefined, 'not a warm sandbox: every exec builds its own');
    assert.ok(r.stdout.startsWith('hi\n') && r.stdout !== 'hi\nrc=0\n', r.stdout);
    assert.ok(r.events.some((e) => e.type === 'violation' && e.action === 'file-create-name'));
    assert.ok(!fs.existsSync(path.join(d.ws, 'a.secret')));
    await assert.rejects(c.run(h.sessionId, ['/nonexistent/cmd']), cc.ExecFailedError);
    await assert.rejects(c.suspend(h.sessionId), (e) => e instanceof cc.UsageError &&
      /only a warm session/.test(e.message));
    await assert.rejects(c.fsWrite(h.sessionId, path.join(d.ws, 'b.secret'), 'x'), (e) =>
      e instanceof cc.PolicyUnenforceableError && e.violation.action === 'file-create-name');
    await c.destroy(h.sessionId);
    return undefined;
  });

  it('concurrent execs: answered by completion, matched by id', async () => {
    const sid = await warm();
    const go = path.join(d.ws, `go-${process.pid}`);
    // A ends only once the test has B's answer: the order is the test's, not the scheduler's.
    let aDone = false;
    const a = c.run(sid, ['sh', '-c', `while [ ! -e ${go} ]; do sleep 0.02; done; echo A`])
      .then((r) => { aDone = true; return r; });
    const many = Array.from({ length: 6 }, (_, i) => c.run(sid, ['sh', '-c', `echo ${i}`]));
    const rb = await c.run(sid, ['sh', '-c', 'echo B']);
    assert.equal(rb.stdout, 'B\n');
    assert.equal(aDone, false, 'A is still running');
    assert.equal((await c.list()).find((h) => h.sessionId === sid).state, 'active');
    fs.writeFileSync(go, '');
    assert.equal((await a).stdout, 'A\n');
    assert.deepEqual((await Promise.all(many)).map((r) => r.stdout), ['0\n', '1\n', '2\n', '3\n', '4\n', '5\n']);
  });

  it('answers the ask mode with egressAnswer', async () => {
    const sid = await warm({ policy: { egressMode: 'ask' } });
    const ex = c.exec(sid, ['sh', '-c',
      "curl -s -o /dev/null --max-time 20 -w '%{http_code}' http://ask.invalid:81/"]);
    const answers = [];
    let out = '';
    for await (const ev of ex) {
      if (ev.type === 'egress.ask') {
        assert.equal(ev.target, 'ask.invalid:81');
        await c.egressAnswer(sid, ev.id, 'deny');
      } else if (ev.type === 'egress.answer') {
        answers.push(ev.answer);
      } else if (ev.type === 'stdout') {
        out += ev.data;
      }
    }
    assert.deepEqual([answers, out], [['deny'], '403']);
    await assert.rejects(c.egressAnswer(sid, 1, 'maybe'), (e) => e instanceof cc.UsageError &&
      /params\.answer/.test(e.message));
  });

  it('suspend and resume', async () => {
    const sid = await warm();
    assert.equal((await c.suspend(sid)).state, 'suspended');
    assert.equal((await c.suspend(sid)).state, 'suspended', 'idempotent');
    await assert.rejects(c.run(sid, ['true']), (e) => e instanceof cc.UsageError &&
      /the session is suspended/.test(e.message));
    assert.equal((await c.list()).find((h) => h.sessionId === sid).state, 'suspended');
    assert.equal((await c.resume(sid)).state, 'warm');
    assert.equal((await c.run(sid, ['echo', 'awake'])).stdout, 'awake\n');
    const none = (await c.launch({ workdir: d.ws, backend: 'none' })).sessionId;
    await assert.rejects(c.suspend(none), (e) => e instanceof cc.UsageError &&
      /only a warm session/.test(e.message));
  });

  it('a slow iterator pauses the connection instead of buffering without bound', async () => {
    const sid = await warm();
    const slow = await cc.connect({ socketPath: d.sock, highWaterMark: 64 * 1024 });
    try {
      const ex = slow.exec(sid, ['sh', '-c', 'head -c 3000000 /dev/zero | tr "\\0" x']);
      let bytes = 0;
      let paused = false;
      for await (const ev of ex) {
        if (ev.type === 'stdout') bytes += cc.eventBytes(ev).length;
        paused ||= slow._paused;
        assert.ok(slow._queuedBytes <= 64 * 1024 + 64 * 1024, 'the queue stays near the mark');
        if (bytes % (256 * 1024) < 16384) await sleep(5);
      }
      assert.equal(bytes, 3000000);
      assert.ok(paused, 'the client stopped reading while the iterator lagged');
      assert.equal((await ex.result).exitCode, 0);
    } finally {
      await slow.close();
    }
  });

  it('a request over 12 MiB is refused before it is sent; the connection stays usable', async () => {
    const sid = await warm();
    await assert.rejects(c.fsWrite(sid, path.join(d.ws, 'big'), 'x'.repeat(13 * 1024 * 1024)),
      (e) => e instanceof cc.UsageError && /longer than 12 MiB/.test(e.message));
    assert.ok((await c.probe()).backends);
  });

  it('a disconnect mid-exec rejects it and the daemon kills the command', async () => {
    const sid = await warm();
    const other = await cc.connect({ socketPath: d.sock });
    const m = marker();
    const ex = other.exec(sid, ['sh', '-c', `sleep ${m}; echo never`]);
    const t = other.terminal(sid, { backend: 'native' });
    assert.ok(await waitUntil(() => procsWith(m).length), 'the command started');
    await other.close();
    await assert.rejects(ex.result, (e) => e instanceof cc.DaemonConnectionError &&
      e.code === 'LAUNCH_FAILED');
    await assert.rejects(t.result, cc.DaemonConnectionError);
    await assert.rejects(other.probe(), cc.DaemonConnectionError, 'closed for good');
    assert.ok(await waitUntil(() => !procsWith(m).length), 'the daemon killed the command');
    const h = (await c.list()).find((x) => x.sessionId === sid);
    assert.ok(await waitUntil(async () =>
      (await c.list()).find((x) => x.sessionId === sid).details.running === 0), JSON.stringify(h));
    assert.equal((await c.run(sid, ['echo', 'still here'])).stdout, 'still here\n', 'the session stays');
  });
});

describe('the daemon going away', () => {
  it('rejects what is in flight with DaemonConnectionError', async () => {
    const d = await startDaemon();
    const c = await cc.connect({ socketPath: d.sock });
    const closed = new Promise((r) => c.once('close', r));
    const sid = (await c.launch({ workdir: d.ws })).sessionId;
    const m = marker();
    const ex = c.exec(sid, ['sleep', m]);
    assert.ok(await waitUntil(() => procsWith(m).length));
    assert.equal(await d.stop(), 0);
    await assert.rejects(ex.result, (e) => e instanceof cc.DaemonConnectionError &&
      /closed the connection/.test(e.message));
    assert.ok((await closed) instanceof cc.DaemonConnectionError);
    assert.ok(await waitUntil(() => !procsWith(m).length), 'SIGTERM left nothing running');
    await d.cleanup();
  });
});
