// SPDX-License-Identifier: Apache-2.0
// Compiled with `tsc -p .` (strict, no emit) by the clients-node-types test: index.d.ts is valid
// TypeScript and describes the API as a harness uses it. Not run.
import {
  connect, Client, Exec, Terminal, ExecEvent, CordonError, PolicyUnenforceableError,
  CommandTimeoutError, DaemonConnectionError, LaunchFailedError, PROTOCOL_VERSION, eventBytes,
  defaultSocketPath, SessionHandle, errorFromWire,
} from '..';

const version: 1 = PROTOCOL_VERSION;

async function harness(): Promise<number> {
  const client: Client = await connect({ socketPath: defaultSocketPath() });
  const handle: SessionHandle = await client.launch({ workdir: '/w', policy: { mode: 'workspace-write' } });
  if (handle.state === 'error' && handle.error) throw errorFromWire(handle.error);
  const ex: Exec = client.exec(handle.sessionId, ['npm', 'test'], { env: { CI: '1' }, stdin: '' });
  ex.on('stderr', (b: Buffer) => process.stderr.write(b));
  for await (const ev of ex) {
    const e: ExecEvent = ev;
    switch (e.type) {
      case 'stdout': process.stdout.write(eventBytes(e)); break;
      case 'violation': console.log(e.action, e.target, e.raw.rule); break;
      case 'exit': console.log(e.exitCode, e.signal ?? 0); break;
      case 'killed': console.log(e.reason); break;
      default: break;
    }
  }
  const { exitCode, warm } = await ex.result;
  const run = await client.run(handle.sessionId, ['true'], { maxOutput: 1024 });
  const t: Terminal = client.terminal(handle.sessionId, { backend: 'native', cols: 100 });
  await t.input('ls\n');
  await t.resize(120, 40);
  await t.close();
  try {
    await client.fsWrite(handle.sessionId, '/w/.env', new Uint8Array([1, 2]));
  } catch (err) {
    if (err instanceof PolicyUnenforceableError) console.log(err.violation?.raw.rule, err.code);
    else if (err instanceof CommandTimeoutError || err instanceof DaemonConnectionError) throw err;
    else if (err instanceof CordonError && err.code === 'USAGE') console.log(err.events.length);
  }
  const st = await client.fsStat(handle.sessionId, '/w');
  const list = await client.fsList(handle.sessionId, '/w');
  const bytes: Buffer = await client.readFile(handle.sessionId, '/w/a', { length: 10 });
  const sessions: SessionHandle[] = await client.list();
  const lf: LaunchFailedError = new DaemonConnectionError('x');
  await client.destroy(handle.sessionId);
  await client.close();
  return exitCode + (warm ? 1 : 0) + run.stdout.length + st.size + list.entries.length +
    bytes.length + sessions.length + version + lf.requestId;
}

void harness;
