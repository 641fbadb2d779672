// SPDX-License-Identifier: Apache-2.0
// `cordon mcp` driven by the official MCP client SDK (@modelcontextprotocol/sdk, pinned in
// package-lock.json): the handshake, the tool list, every tool, the sandbox's refusals as
// violations, errors, timeouts, cancellation that ends the sandboxed process.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { CORDON, SOURCE, connect, makeDirs, pidsOf, until } from './harness.mjs';

const TOOLS = ['edit_file', 'list_directory', 'read_file', 'session_create', 'session_destroy',
  'session_exec', 'session_list', 'shell', 'write_file'];

describe('cordon mcp with the SDK client', () => {
  let dirs;
  let c;
  before(async () => {
    dirs = makeDirs();
    c = await connect(dirs);
  });
  after(async () => {
    const end = await c.close();
    dirs.cleanup();
    assert.doesNotMatch(end.stderr, /Sanitizer|runtime error/);
    assert.equal(end.code, 0, end.stderr);
  });

  const call = (name, args, opts) => c.client.callTool({ name, arguments: args }, undefined, opts);

  it('initializes: server info, the tools capability, instructions naming the workspace', () => {
    assert.equal(c.client.getServerVersion().name, 'cordon');
    assert.ok(c.client.getServerCapabilities().tools);
    assert.match(c.client.getInstructions(), /sandbox policy for .*\/ws/);
  });

  it('answers ping', async () => {
    assert.deepEqual(await c.client.ping(), {});
  });

  it('lists the tools, each with an object schema, and docs/mcp.md documents each', async () => {
    const { tools } = await c.client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), TOOLS);
    const doc = fs.readFileSync(path.join(SOURCE, 'docs/mcp.md'), 'utf8');
    for (const t of tools) {
      assert.equal(t.inputSchema.type, 'object', t.name);
      assert.equal(t.inputSchema.additionalProperties, false, t.name);
      assert.ok(t.description.length > 20, t.name);
      assert.ok(doc.includes(`### \`${t.name}\``), `docs/mcp.md has a section for ${t.name}`);
      for (const p of Object.keys(t.inputSchema.properties))
        assert.ok(doc.includes(`\`${p}\``), `docs/mcp.md names ${t.name}'s argument ${p}`);
    }
  });

  it('shell: output, exit status, output streamed as progress', async () => {
    // The command waits for the client to have seen its first line as progress (the file
    // `go`): the SDK drops a progress notification that it reads together with the response
    // (it runs notification handlers a tick later, after the response removed the handler).
    const progress = [];
    const r = await call('shell', {
      command: 'echo one; while [ ! -e go ]; do sleep 0.01; done; echo two >&2; exit 7',
    }, {
      onprogress: (p) => {
        progress.push(p);
        if (p.message === 'one\n') fs.writeFileSync(path.join(dirs.ws, 'go'), '');
      },
    });
    assert.equal(r.isError, false);
    assert.equal(r.structuredContent.exitCode, 7);
    assert.equal(r.structuredContent.stdout, 'one\n');
    assert.equal(r.structuredContent.stderr, 'two\n');
    assert.deepEqual(r.structuredContent.violations, []);
    assert.match(r.content[0].text, /one\n[\s\S]*\[exit status 7\]/);
    assert.equal(progress[0].message, 'one\n');
    assert.equal(progress[0].progress, 1);
    progress.forEach((p, i) => assert.equal(p.progress, i + 1));
    fs.rmSync(path.join(dirs.ws, 'go'));
  });

  it('shell with argv, cwd and env', async () => {
    fs.mkdirSync(path.join(dirs.ws, 'sub'), { recursive: true });
    // LANG is the server's own too (harness.mjs): the call's value replaces it.
    const r = await call('shell', { argv: ['sh', '-c', 'pwd; echo "$GREETING $LANG"'], cwd: 'sub',
      env: { GREETING: 'hello', LANG: 'C' } });
    assert.equal(r.structuredContent.stdout, `${path.join(dirs.ws, 'sub')}\nhello C\n`);
    assert.equal(r.structuredContent.exitCode, 0);
  });

  it('shell: creating .env is refused and reported as a violation; nothing is left', async () => {
    const r = await call('shell', { command: 'touch .env' });
    assert.equal(r.isError, false);
    assert.notEqual(r.structuredContent.exitCode, 0);
    const v = r.structuredContent.violations;
    assert.equal(v.length, 1);
    assert.equal(v[0].action, 'file-create-name');
    assert.equal(v[0].target, path.join(dirs.ws, '.env'));
    assert.equal(v[0].rule, '.env');
    assert.match(r.content[0].text, /refused by the sandbox[\s\S]*file-create-name/);
    assert.ok(!fs.existsSync(path.join(dirs.ws, '.env')));
  });

  it('shell: ~/.ssh stays unreadable', async () => {
    const r = await call('shell', { command: 'cat "$HOME/.ssh/id_rsa"' });
    assert.notEqual(r.structuredContent.exitCode, 0);
    assert.doesNotMatch(r.structuredContent.stdout, /SECRET/);
  });

  it('shell: a command a signal ends: 128+N and the signal\'s name', async () => {
    const r = await call('shell', { command: 'kill -TERM $$' });
    assert.equal(r.isError, false);
    assert.equal(r.structuredContent.exitCode, 143);
    assert.equal(r.structuredContent.signal, 'SIGTERM');
  });

  it('shell: a timeout kills the command and is a tool error', async () => {
    const r = await call('shell', { command: 'sleep 100', timeoutMs: 300 });
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent.timedOut, true);
    assert.equal(r.structuredContent.exitCode, null);
    assert.match(r.content[0].text, /timed out/);
  });

  it('shell: very large output is cut in the middle with a marker', async () => {
    const r = await call('shell', { command: 'seq 1 100000' });
    const out = r.structuredContent.stdout;
    assert.equal(r.structuredContent.truncated, true);
    assert.ok(out.length < 70 * 1024, `kept ${out.length} bytes`);
    assert.ok(out.startsWith('1\n2\n3\n'));
    assert.ok(out.endsWith('99999\n100000\n'));
    assert.match(out, /\n\[cordon: \d+ bytes of output omitted\]\n/);
  });

  it('write_file, read_file, edit_file, list_directory', async () => {
    let r = await call('write_file', { path: 'notes.txt', content: 'alpha beta\n' });
    assert.equal(r.isError, false, r.content[0].text);
    assert.equal(r.structuredContent.created, true);
    r = await call('edit_file', { path: 'notes.txt', oldText: 'beta', newText: 'gamma' });
    assert.equal(r.isError, false, r.content[0].text);
    r = await call('read_file', { path: path.join(dirs.ws, 'notes.txt') });
    assert.equal(r.structuredContent.content, 'alpha gamma\n');
    assert.equal(r.structuredContent.eof, true);
    assert.equal(r.content[0].text, 'alpha gamma\n');
    r = await call('read_file', { path: 'notes.txt', offset: 6, length: 3 });
    assert.equal(r.structuredContent.content, 'gam');
    assert.equal(r.structuredContent.eof, false);
    r = await call('write_file', { path: 'bin.dat', content: 'AAEC/w==', encoding: 'base64' });
    assert.equal(r.isError, false, r.content[0].text);
    assert.deepEqual([...fs.readFileSync(path.join(dirs.ws, 'bin.dat'))], [0, 1, 2, 255]);
    r = await call('read_file', { path: 'bin.dat' });
    assert.equal(r.structuredContent.encoding, 'base64');
    assert.equal(r.structuredContent.content, 'AAEC/w==');
    r = await call('list_directory', { path: '.' });
    assert.deepEqual(r.structuredContent.entries.map((e) => e.name).sort(),
      ['bin.dat', 'notes.txt', 'sub']);
    r = await call('edit_file', { path: 'notes.txt', oldText: 'absent', newText: 'x' });
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent.error.code, 'EXEC_FAILED');
  });

  it('write_file: a denied name, a protected path and a secret are refused as violations',
    async () => {
      let r = await call('write_file', { path: '.env', content: 'TOKEN=1\n' });
      assert.equal(r.isError, true);
      assert.equal(r.structuredContent.violations[0].action, 'file-create-name');
      assert.equal(r.structuredContent.violations[0].target, path.join(dirs.ws, '.env'));
      assert.ok(!fs.existsSync(path.join(dirs.ws, '.env')));
      fs.mkdirSync(path.join(dirs.ws, '.git', 'hooks'), { recursive: true });
      r = await call('write_file', { path: '.git/hooks/pre-commit', content: '#!/bin/sh\n' });
      assert.equal(r.isError, true);
      assert.equal(r.structuredContent.violations[0].action, 'file-write*');
      assert.ok(!fs.existsSync(path.join(dirs.ws, '.git', 'hooks', 'pre-commit')));
      r = await call('read_file', { path: path.join(dirs.home, '.ssh', 'id_rsa') });
      assert.equal(r.isError, true);
      assert.equal(r.structuredContent.violations[0].action, 'file-read*');
      assert.doesNotMatch(JSON.stringify(r), /SECRET/);
      r = await call('write_file', { path: path.join(dirs.dir, 'outside.txt'), content: 'x' });
      assert.equal(r.isError, true);
      assert.match(r.structuredContent.violations[0].rule, /outside the writable roots/);
    });

  it('sessions: create, exec (with refusals), fs in the session, list, destroy', async () => {
    let r = await call('session_create', {});
    assert.equal(r.isError, false, r.content[0].text);
    const id = r.structuredContent.sessionId;
    assert.equal(r.structuredContent.state, 'warm');
    r = await call('session_exec', { sessionId: id, command: 'echo $((40+2)); touch .env' });
    assert.equal(r.structuredContent.stdout, '42\n');
    assert.notEqual(r.structuredContent.exitCode, 0);
    assert.equal(r.structuredContent.violations[0].action, 'file-create-name');
    r = await call('write_file', { sessionId: id, path: 'from-session.txt', content: 'hi' });
    assert.equal(r.isError, false, r.content[0].text);
    r = await call('session_exec', { sessionId: id, argv: ['cat', 'from-session.txt'] });
    assert.equal(r.structuredContent.stdout, 'hi');
    r = await call('session_list', {});
    assert.deepEqual(r.structuredContent.sessions.map((s) => s.sessionId), [id]);
    assert.equal(r.structuredContent.sessions[0].execs, 2);
    r = await call('session_destroy', { sessionId: id });
    assert.equal(r.isError, false);
    r = await call('session_exec', { sessionId: id, command: 'true' });
    assert.equal(r.isError, true);
    assert.match(r.content[0].text, /no session/);
    r = await call('session_list', {});
    assert.deepEqual(r.structuredContent.sessions, []);
  });

  it('session_destroy kills what runs in the session; that call ends as a tool error',
    async () => {
      const id = (await call('session_create', {})).structuredContent.sessionId;
      const marker = ['sleep', '4326'];
      const running = call('session_exec', { sessionId: id, command: 'exec sleep 4326' });
      assert.ok(await until(() => pidsOf(marker).length === 1), 'the sleep runs');
      const d = await call('session_destroy', { sessionId: id });
      assert.equal(d.isError, false, d.content[0].text);
      const r = await running;
      assert.equal(r.isError, true);
      assert.equal(r.structuredContent.error.code, 'KILLED', r.content[0].text);
      assert.match(r.content[0].text, /session was destroyed/);
      assert.equal(pidsOf(marker).length, 0);
    });

  it('an unknown tool is a JSON-RPC error; bad arguments a tool error saying what to fix',
    async () => {
      await assert.rejects(call('shel', { command: 'true' }), (e) => e instanceof McpError &&
        e.code === ErrorCode.InvalidParams && /unknown tool 'shel'; did you mean 'shell'/.test(e.message));
      let r = await call('shell', { comand: 'true' });
      assert.equal(r.isError, true);
      assert.match(r.content[0].text, /unknown member 'comand'; did you mean 'command'/);
      r = await call('shell', { command: 'true', timeoutMs: -1 });
      assert.equal(r.isError, true);
      assert.match(r.content[0].text, /arguments\.timeoutMs: expected an integer from 1/);
      r = await call('shell', {});
      assert.equal(r.isError, true);
      assert.match(r.content[0].text, /exactly one of 'command'/);
      r = await call('read_file', {});
      assert.match(r.content[0].text, /missing required member 'path'/);
      r = await call('write_file', { path: 'x', content: 'not base64!', encoding: 'base64' });
      assert.match(r.content[0].text, /not canonical base64/);
      r = await call('session_exec', { sessionId: 'nope', command: 'true' });
      assert.match(r.content[0].text, /no session 'nope'/);
    });

  it('cancellation kills the sandboxed command and leaves no process', async () => {
    const marker = ['sleep', '4321'];
    const ac = new AbortController();
    const p = call('shell', { command: 'echo started; exec sleep 4321' },
      { signal: ac.signal, onprogress: () => {} });
    assert.ok(await until(() => pidsOf(marker).length === 1), 'the sleep runs');
    ac.abort('the user pressed stop');
    await assert.rejects(p);
    assert.ok(await until(() => pidsOf(marker).length === 0), 'the sleep is gone');
    // The server goes on.
    const r = await call('shell', { command: 'echo after' });
    assert.equal(r.structuredContent.stdout, 'after\n');
  });

  it('cancellation of a session exec kills it; the session stays usable', async () => {
    const id = (await call('session_create', {})).structuredContent.sessionId;
    const marker = ['sleep', '4322'];
    const ac = new AbortController();
    const p = call('session_exec', { sessionId: id, command: 'exec sleep 4322' },
      { signal: ac.signal });
    assert.ok(await until(() => pidsOf(marker).length === 1), 'the sleep runs');
    ac.abort();
    await assert.rejects(p);
    assert.ok(await until(() => pidsOf(marker).length === 0), 'the sleep is gone');
    const r = await call('session_exec', { sessionId: id, command: 'echo still' });
    assert.equal(r.structuredContent.stdout, 'still\n');
    await call('session_destroy', { sessionId: id });
  });
});

describe('cordon mcp policy flags', () => {
  it('--mode read-only: a write is refused, as for cordon run', async () => {
    const dirs = makeDirs();
    const c = await connect(dirs, ['--mode', 'read-only']);
    try {
      let r = await c.client.callTool({ name: 'write_file',
        arguments: { path: 'a.txt', content: 'x' } });
      assert.equal(r.isError, true);
      assert.equal(r.structuredContent.violations[0].action, 'file-write*');
      r = await c.client.callTool({ name: 'shell', arguments: { command: 'echo x > b.txt' } });
      assert.notEqual(r.structuredContent.exitCode, 0);
      assert.ok(!fs.existsSync(path.join(dirs.ws, 'b.txt')));
    } finally {
      const end = await c.close();
      dirs.cleanup();
      assert.equal(end.code, 0, end.stderr);
    }
  });

  it('--backend landlock: shell runs there (its refusals reported); sessions are refused',
    async () => {
      const dirs = makeDirs();
      const c = await connect(dirs, ['--backend', 'landlock']);
      try {
        let r = await c.client.callTool({ name: 'shell', arguments: { command: 'touch .env' } });
        assert.notEqual(r.structuredContent.exitCode, 0);
        assert.equal(r.structuredContent.violations[0].action, 'file-create-name');
        r = await c.client.callTool({ name: 'session_create', arguments: {} });
        assert.equal(r.isError, true);
        assert.match(r.content[0].text, /native or microvm backend only.*landlock backend/);
      } finally {
        const end = await c.close();
        dirs.cleanup();
        assert.equal(end.code, 0, end.stderr);
      }
    });

  it('settings layers: a --settings file, the project file, the managed file, as for run',
    async () => {
      const dirs = makeDirs();
      const settings = path.join(dirs.dir, 'settings.json');
      fs.writeFileSync(settings, JSON.stringify({ sandbox: { denyCreateNames: ['*.one'] } }));
      fs.mkdirSync(path.join(dirs.ws, '.cordon'));
      fs.writeFileSync(path.join(dirs.ws, '.cordon', 'settings.json'),
        JSON.stringify({ sandbox: { denyCreateNames: ['*.two'] } }));
      const managed = path.join(dirs.dir, 'managed.json');
      fs.writeFileSync(managed, JSON.stringify({ sandbox: { denyCreateNames: ['*.three'] } }),
        { mode: 0o644 });
      const c = await connect(dirs, ['--settings', settings],
        { CORDON_MANAGED_SETTINGS: managed });
      try {
        for (const name of ['a.one', 'a.two', 'a.three']) {
          const r = await c.client.callTool({ name: 'shell',
            arguments: { command: `touch ${name}` } });
          assert.notEqual(r.structuredContent.exitCode, 0, name);
          assert.equal(r.structuredContent.violations[0].action, 'file-create-name', name);
          const w = await c.client.callTool({ name: 'write_file',
            arguments: { path: `b${name}`, content: 'x' } });
          assert.equal(w.isError, true, name);
          assert.ok(!fs.existsSync(path.join(dirs.ws, name)) &&
            !fs.existsSync(path.join(dirs.ws, `b${name}`)), name);
        }
        const r = await c.client.callTool({ name: 'shell', arguments: { command: 'touch a.four' } });
        assert.equal(r.structuredContent.exitCode, 0);
      } finally {
        const end = await c.close();
        dirs.cleanup();
        assert.equal(end.code, 0, end.stderr);
      }
    });

  it('managed settings that forbid unsandboxed commands refuse --sandbox off at start-up',
    async () => {
      const dirs = makeDirs();
      const managed = path.join(dirs.dir, 'managed.json');
      fs.writeFileSync(managed, JSON.stringify({ allowUnsandboxedCommands: false }),
        { mode: 0o644 });
      try {
        const r = await new Promise((resolve) => execFile(CORDON, ['mcp', '--sandbox', 'off'],
          { cwd: dirs.ws, env: { PATH: process.env.PATH, HOME: dirs.home,
            CORDON_MANAGED_SETTINGS: managed } },
          (err, stdout, stderr) => resolve({ code: err ? err.code : 0, stdout, stderr })));
        assert.equal(r.code, 125);
        assert.equal(r.stdout, '');
        assert.match(r.stderr, /^cordon: fatal: POLICY_INVALID: .*allowUnsandboxedCommands/m);
      } finally {
        dirs.cleanup();
      }
    });

  it('--timeout (limits.timeout) ends a command as a timeout', async () => {
    const dirs = makeDirs();
    const c = await connect(dirs, ['--timeout', '300ms']);
    try {
      const r = await c.client.callTool({ name: 'shell', arguments: { command: 'sleep 100' } });
      assert.equal(r.isError, true);
      assert.equal(r.structuredContent.timedOut, true);
      assert.equal(r.structuredContent.error.code, 'TIMEOUT');
    } finally {
      const end = await c.close();
      dirs.cleanup();
      assert.equal(end.code, 0, end.stderr);
    }
  });

  it('a policy the flags make invalid is refused at start-up with the fatal line', async () => {
    const dirs = makeDirs();
    try {
      const r = await new Promise((resolve) => execFile(CORDON, ['mcp', '--writable', 'rel/../x'],
        { cwd: dirs.ws, env: { PATH: process.env.PATH, HOME: dirs.home } },
        (err, stdout, stderr) => resolve({ code: err ? err.code : 0, stdout, stderr })));
      assert.equal(r.code, 125);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /^cordon: fatal: POLICY_INVALID: --writable: /m);
    } finally {
      dirs.cleanup();
    }
  });

  it('closing stdin ends the server and what it runs', async () => {
    const dirs = makeDirs();
    const c = await connect(dirs);
    const marker = ['sleep', '4323'];
    const p = c.client.callTool({ name: 'shell', arguments: { command: 'exec sleep 4323' } });
    p.catch(() => {});
    assert.ok(await until(() => pidsOf(marker).length === 1), 'the sleep runs');
    const proc = c.transport._process;
    const exited = new Promise((r) => proc.once('exit', (code, sig) => r({ code, sig })));
    proc.stdin.end();
    assert.deepEqual(await exited, { code: 0, sig: null });
    assert.ok(await until(() => pidsOf(marker).length === 0), 'the sleep is gone');
    await c.client.close();
    dirs.cleanup();
  });
});
