// SPDX-License-Identifier: Apache-2.0
'use strict';
// The Node example of the repository's README ("Embedding") runs as written against a real
// cordond found at its default socket ($XDG_RUNTIME_DIR/cordon/cordond.sock), with the package
// installed as `cordon-client`, and prints what the README says it prints.
const assert = require('node:assert/strict');
const { execFile } = require('child_process');
const fs = require('fs');
const path = require('path');
const { it } = require('node:test');
const { startDaemon, BASE } = require('./harness');

const SOURCE = process.env.CORDON_SOURCE_DIR || path.resolve(__dirname, '../../..');

function example(lang) {
  const readme = fs.readFileSync(path.join(SOURCE, 'README.md'), 'utf8');
  const at = readme.indexOf(`<!-- embedding-example: ${lang} `);
  assert.ok(at >= 0, `README.md has the ${lang} embedding example`);
  const m = /```[a-z]*\n([\s\S]*?)```/.exec(readme.slice(at));
  assert.ok(m, 'a code block follows the marker');
  const code = m[1];
  assert.ok(code.trimEnd().split('\n').length <= 13, 'about ten lines');
  return code;
}

it('the README example runs and prints the output, the refusal, the exit status', async () => {
  const code = example('node');
  const rt = fs.mkdtempSync(path.join(BASE, 'cordon-node-readme-'));
  const d = await startDaemon({ socket: false, env: { XDG_RUNTIME_DIR: rt },
    socketPath: path.join(rt, 'cordon', 'cordond.sock') });
  try {
    const app = path.join(d.dir, 'app');
    fs.mkdirSync(path.join(app, 'node_modules'), { recursive: true });
    fs.symlinkSync(path.resolve(__dirname, '..'), path.join(app, 'node_modules', 'cordon-client'));
    fs.writeFileSync(path.join(app, 'example.mjs'), code);
    const { stdout } = await new Promise((resolve, reject) => execFile(process.execPath,
      [path.join(app, 'example.mjs')], { cwd: d.ws, env: { ...process.env, XDG_RUNTIME_DIR: rt },
        timeout: 60000 }, (err, out, errOut) => (err ? reject(new Error(`${err.message}: ${errOut}`))
        : resolve({ stdout: out }))));
    const lines = stdout.trimEnd().split('\n');
    // The output and the refusal come on two channels (the command's pipe, the supervisor):
    // their order is not fixed; the exit status comes last.
    assert.deepEqual(lines.slice(0, -1).sort(), ['hello from the sandbox',
      `refused: file-create-name ${path.join(d.ws, '.env')}`]);
    assert.equal(lines[lines.length - 1], 'exit 1');
    assert.ok(!fs.existsSync(path.join(d.ws, '.env')));
  } finally {
    assert.equal(await d.cleanup(), 0);
    fs.rmSync(rt, { recursive: true, force: true });
  }
});
