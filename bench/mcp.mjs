// SPDX-License-Identifier: Apache-2.0
// bench/mcp.mjs: what a tool call of `cordon mcp` costs, measured from a client of the official
// SDK (tests/mcp's, pinned). Run through bench/mcp.sh, which installs it:
//   bench/mcp.sh [build/cordon] [rounds]
// Prints one line per measurement: median and p90 over the rounds, in milliseconds. For
// comparison, `cordon run -- /bin/true` (spawned from this process: node's spawn included) and a
// bare /bin/true spawned the same way.
import { spawnSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const cordon = process.argv[2];
const N = Number(process.argv[3] || 100);

async function time(label, f) {
  for (let i = 0; i < 5; i++) await f(); // untimed
  const ts = [];
  for (let i = 0; i < N; i++) {
    const t = performance.now();
    await f();
    ts.push(performance.now() - t);
  }
  ts.sort((a, b) => a - b);
  console.log(`${label.padEnd(36)} median ${ts[N >> 1].toFixed(2).padStart(8)} ms   ` +
    `p90 ${ts[Math.floor(N * 0.9)].toFixed(2).padStart(8)} ms`);
}

const check = (r) => { if (r.isError) throw new Error(r.content[0].text); return r; };
const client = new Client({ name: 'bench', version: '1' });
const t0 = performance.now();
await client.connect(new StdioClientTransport({ command: cordon, args: ['mcp'] }));
console.log(`${'start + initialize'.padEnd(36)} ${(performance.now() - t0).toFixed(2)} ms`);
await time('bare /bin/true (spawnSync)', () => spawnSync('/bin/true'));
await time('cordon run -- /bin/true (spawnSync)', () => spawnSync(cordon, ['run', '--', '/bin/true']));
await time('ping', () => client.ping());
await time('shell argv [/bin/true]', async () => check(await client.callTool({ name: 'shell',
  arguments: { argv: ['/bin/true'] } })));
const id = check(await client.callTool({ name: 'session_create', arguments: {} }))
  .structuredContent.sessionId;
await time('session_exec argv [/bin/true]', async () => check(await client.callTool({
  name: 'session_exec', arguments: { sessionId: id, argv: ['/bin/true'] } })));
await time('write_file 1 KiB', async () => check(await client.callTool({ name: 'write_file',
  arguments: { path: 'bench-mcp.txt', content: 'x'.repeat(1024) } })));
await time('read_file 1 KiB', async () => check(await client.callTool({ name: 'read_file',
  arguments: { path: 'bench-mcp.txt' } })));
const t1 = performance.now();
const r = await client.callTool({ name: 'shell',
  arguments: { command: 'head -c 50000000 /dev/zero | tr "\\0" a' } });
console.log(`${'shell, 50 MB of output'.padEnd(36)} ${(performance.now() - t1).toFixed(0)} ms, ` +
  `${r.structuredContent.stdout.length} bytes kept, truncated ${r.structuredContent.truncated}`);
await client.close();
