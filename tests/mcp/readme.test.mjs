// SPDX-License-Identifier: Apache-2.0
// The MCP examples of the repository's README ("Embedding") work as written: the client
// configuration names a command line that starts a server the SDK talks to, and the SDK script,
// run with `cordon` in PATH and the SDK installed beside it, prints what the README says.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CORDON, SOURCE, makeDirs } from './harness.mjs';

// Node 18 (Debian 12's) has no import.meta.dirname.
const HERE = path.dirname(fileURLToPath(import.meta.url));

function example(name) {
  const readme = fs.readFileSync(path.join(SOURCE, 'README.md'), 'utf8');
  const at = readme.indexOf(`<!-- embedding-example: ${name} `);
  assert.ok(at >= 0, `README.md has the ${name} embedding example`);
  const m = /```[a-z]*\n([\s\S]*?)```/.exec(readme.slice(at));
  assert.ok(m, 'a code block follows the marker');
  assert.ok(m[1].trimEnd().split('\n').length <= 13, 'about ten lines');
  return m[1];
}

// PATH with the `cordon` under test first, as an installed one would be.
function envWithCordon(dirs) {
  const bin = path.join(dirs.dir, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.symlinkSync(CORDON, path.join(bin, 'cordon'));
  return { PATH: `${bin}:${process.env.PATH}`, HOME: dirs.home, LANG: 'C.UTF-8' };
}

it('the README client configuration starts a server with the tools', async () => {
  const config = JSON.parse(example('mcp-config'));
  const server = config.mcpServers.cordon;
  assert.equal(server.command, 'cordon');
  assert.equal(server.args[0], 'mcp');
  const dirs = makeDirs();
  const client = new Client({ name: 'readme', version: '1' });
  try {
    await client.connect(new StdioClientTransport({ command: server.command, args: server.args,
      cwd: dirs.ws, env: envWithCordon(dirs) }));
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'shell'));
  } finally {
    await client.close();
    dirs.cleanup();
  }
});

it('the README SDK script prints the output, the refusal, the exit status', async () => {
  const code = example('mcp');
  const dirs = makeDirs();
  try {
    const app = path.join(dirs.dir, 'app');
    fs.mkdirSync(app);
    // The SDK as `npm install` would put it beside the script.
    fs.symlinkSync(path.join(HERE, 'node_modules'), path.join(app, 'node_modules'));
    fs.writeFileSync(path.join(app, 'mcp.mjs'), code);
    const stdout = await new Promise((resolve, reject) => execFile(process.execPath,
      [path.join(app, 'mcp.mjs')], { cwd: dirs.ws, env: envWithCordon(dirs), timeout: 60000 },
      (err, out, errOut) => (err ? reject(new Error(`${err.message}: ${errOut}`)) : resolve(out))));
    assert.deepEqual(stdout.trimEnd().split('\n'), ['hello from the sandbox',
      `refused: file-create-name ${path.join(dirs.ws, '.env')}`, 'exit 1']);
    assert.ok(!fs.existsSync(path.join(dirs.ws, '.env')));
  } finally {
    dirs.cleanup();
  }
});
