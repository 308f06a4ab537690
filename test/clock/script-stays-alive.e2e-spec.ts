import { spawn } from 'node:child_process';

/**
 * A plain script (no server, no Nest) whose only pending work is a caller waiting for a lock, on the
 * in-memory store: nothing else keeps Node's event loop alive (the store has no socket, the library's
 * timers are unref'd). The wait must still be answered: an acquisition in flight keeps the process
 * alive (Clock.keepAlive), and nothing does once it has ended, so the script then exits by itself.
 * Without that, Node ends the process with the top-level await unsettled (exit code 13).
 */
const SCRIPT = `
import { LockClient } from 'nestjs-distributed-lock';
import { InMemoryLockStore } from 'nestjs-distributed-lock/testing';
const locks = await LockClient.connect({ client: new InMemoryLockStore() });
const first = await locks.lock('job', '300ms'); // held, not renewed: its lease runs out
const second = await locks.runInNewContext(() => locks.tryLock('job', { waitTime: '5s' }));
console.log(JSON.stringify({ first: first.isHeld, second: second !== false && second.isHeld, tokens: [first.token, second && second.token] }));
await locks.close();
`;

function runScript(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', SCRIPT], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

test('a script waiting for a lock on the in-memory store gets its answer, then exits by itself', async () => {
  const { code, stdout, stderr } = await runScript();
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  const result = JSON.parse(stdout.trim()) as { first: boolean; second: boolean; tokens: number[] };
  expect(result.first).toBe(false); // its lease ran out while the other waited
  expect(result.second).toBe(true);
  expect(result.tokens[1]).toBeGreaterThan(result.tokens[0]!);
}, 20_000);
