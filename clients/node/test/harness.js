// SPDX-License-Identifier: Apache-2.0
'use strict';
// Starts a real cordond for the tests: its socket in a fresh private directory, HOME a fake home
// holding a secret (~/.ssh/id_rsa), a workspace beside it. Environment: CORDOND (the binary),
// CORDON_TEST_TMP (where trees go; default /var/tmp: the sandbox has a private /tmp).
const { spawn } = require('child_process');
const fs = require('fs');
const net = require('net');
const path = require('path');

const CORDOND = process.env.CORDOND;
const BASE = process.env.CORDON_TEST_TMP || '/var/tmp';

function mkdirp(p, mode) {
  fs.mkdirSync(p, { recursive: true });
  fs.chmodSync(p, mode);
}

async function canConnect(sock) {
  return new Promise((resolve) => {
    const s = net.connect({ path: sock });
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls cond() (sync or async) until truthy or timeout; returns its last value. */
async function waitUntil(cond, timeoutMs = 10000, stepMs = 50) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await cond();
    if (v || Date.now() >= deadline) return v;
    await sleep(stepMs);
  }
}

/** One cordond. opts.args: extra arguments; opts.env: extra environment; opts.socket: false to
 * let it pick its default socket (then opts.env should set XDG_RUNTIME_DIR). */
async function startDaemon(opts = {}) {
  if (!CORDOND) throw new Error('CORDOND is not set');
  const dir = fs.mkdtempSync(path.join(BASE, 'cordon-node-client-'));
  fs.chmodSync(dir, 0o755); // the sessions' workspaces live below
  const home = path.join(dir, 'home');
  mkdirp(path.join(home, '.ssh'), 0o700);
  fs.writeFileSync(path.join(home, '.ssh', 'id_rsa'), 'PRIVATE KEY\n');
  const ws = path.join(dir, 'ws');
  mkdirp(ws, 0o755);
  const sock = opts.socketPath || path.join(dir, 'run', 'cordond.sock');
  const args = opts.socket === false ? [] : ['--socket', sock];
  const env = { ...process.env, HOME: home, ...(opts.env || {}) };
  const errPath = path.join(dir, 'stderr');
  const errFd = fs.openSync(errPath, 'a');
  const proc = spawn(CORDOND, [...args, ...(opts.args || [])], { env, stdio: ['ignore', 'pipe', errFd] });
  fs.closeSync(errFd);
  let out = '';
  const startup = await new Promise((resolve) => {
    proc.stdout.on('data', (d) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
    });
    proc.once('exit', () => resolve(out));
  });
  await waitUntil(async () => proc.exitCode !== null || (await canConnect(sock)));
  const d = {
    dir, home, ws, sock, proc, startup,
    stderr: () => fs.readFileSync(errPath, 'utf8'),
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      const exited = new Promise((r) => proc.once('exit', (code) => r(code)));
      proc.kill('SIGTERM');
      let timer;
      const hung = new Promise((r) => { timer = setTimeout(() => r('hung'), 20000); });
      const code = await Promise.race([exited, hung]);
      clearTimeout(timer); // a pending timer would keep the test process alive
      if (code === 'hung') proc.kill('SIGKILL');
      return code;
    },
    async cleanup() {
      const code = await d.stop();
      fs.rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
  return d;
}

/** Pids of processes whose command line contains `text`. */
function procsWith(text) {
  const found = [];
  for (const p of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(p) || Number(p) === process.pid) continue;
    try {
      if (fs.readFileSync(`/proc/${p}/cmdline`).includes(text)) found.push(Number(p));
    } catch (_) {
      // gone, or not ours to read
    }
  }
  return found;
}

let markers = 0;
/** A `sleep` duration no other process uses: findable in /proc. */
function marker() {
  markers += 1;
  return `4243.${process.pid}${String(markers).padStart(4, '0')}`;
}

function killMatching(text) {
  for (const pid of procsWith(text)) {
    try { process.kill(pid, 'SIGKILL'); } catch (_) { /* gone */ }
  }
}

module.exports = { startDaemon, waitUntil, procsWith, marker, killMatching, sleep, BASE };
