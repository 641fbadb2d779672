// SPDX-License-Identifier: Apache-2.0
// What the tests of `cordon mcp` share: a private workspace and home (with a secret in
// ~/.ssh), and a client of the official SDK connected to a `cordon mcp` started there.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

// Node 18 (Debian 12's) has no import.meta.dirname.
const HERE = path.dirname(fileURLToPath(import.meta.url));

export const CORDON = process.env.CORDON;
export const SOURCE = process.env.CORDON_SOURCE_DIR || path.resolve(HERE, '../..');
const BASE = process.env.CORDON_TEST_TMP || '/var/tmp';

// A workspace and a home of their own; ~/.ssh/id_rsa holds a secret the sandbox must hide.
export function makeDirs() {
  const dir = fs.mkdtempSync(path.join(BASE, 'cordon-mcp-test-'));
  const ws = path.join(dir, 'ws');
  const home = path.join(dir, 'home');
  fs.mkdirSync(path.join(home, '.ssh'), { recursive: true });
  fs.mkdirSync(ws);
  fs.writeFileSync(path.join(home, '.ssh', 'id_rsa'), 'SECRET-KEY\n', { mode: 0o600 });
  return { dir, ws, home, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

export async function connect(dirs, args = [], env = {}) {
  const transport = new StdioClientTransport({
    command: CORDON,
    args: ['mcp', ...args],
    cwd: dirs.ws,
    env: { PATH: process.env.PATH, HOME: dirs.home, LANG: 'C.UTF-8', ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr.on('data', (d) => { stderr += d; });
  const client = new Client({ name: 'cordon-tests', version: '1.0.0' });
  await client.connect(transport);
  const proc = transport._process;
  const exited = new Promise((r) => proc.once('exit', (code, sig) => r({ code, sig })));
  // Ends the server's stdin, waits for it to exit (the SDK's close() would send SIGTERM after
  // 2 s, which a loaded machine or the ASan build can exceed), closes the client; returns how
  // the server exited and what it wrote on stderr (a sanitizer's report under the ASan build).
  const close = async () => {
    proc.stdin.end();
    const how = await exited;
    await client.close();
    return { ...how, stderr };
  };
  return { client, transport, stderr: () => stderr, close };
}

// The pids of processes whose command line is exactly `argv` (the sandbox's processes are
// visible from the host: its PID namespace is a child of ours).
export function pidsOf(argv) {
  const want = argv.join('\0') + '\0';
  const pids = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (fs.readFileSync(`/proc/${e}/cmdline`, 'latin1') === want) pids.push(Number(e));
    } catch { /* it ended meanwhile */ }
  }
  return pids;
}

// Polls `cond` until it holds or `ms` pass (an upper bound for a state change the test cannot
// be told about, never a delay the test relies on).
export async function until(cond, ms = 20000) {
  const end = Date.now() + ms;
  for (;;) {
    if (cond()) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
}
