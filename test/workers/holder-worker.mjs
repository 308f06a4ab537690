// Holds one lock and reports what happens to it, for fault tests (SIGKILL, SIGSTOP, Redis restart).
// env: DISTRIBUTED_LOCK_REDIS_* (any mode), LOCK_NAME, LEASE (ms, or "watchdog"), WATCHDOG (ms, default 30000)
// Prints {"type":"acquired","token"}, {"type":"renewed"}, {"type":"lost","reason"}, {"type":"aborted","reason"}
// Commands on stdin: "unlock" -> {"type":"unlocked"} or {"type":"unlock-failed","code"}; "exit".
import { createInterface } from 'node:readline';
import { LockClient } from './core.mjs';

const send = (message) => console.log(JSON.stringify(message));
const client = await LockClient.connect({ watchdogTimeout: Number(process.env.WATCHDOG ?? 30000) });
client.events.on('renewed', () => send({ type: 'renewed' }));
client.events.on('lost', ({ reason }) => send({ type: 'lost', reason }));

const lease = process.env.LEASE === 'watchdog' ? undefined : Number(process.env.LEASE);
const handle = await client.lock(process.env.LOCK_NAME, lease);
handle.signal.addEventListener('abort', () => send({ type: 'aborted', reason: handle.signal.reason?.reason }));
send({ type: 'acquired', token: handle.token, pid: process.pid });

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (line === 'unlock') {
    try {
      await handle.unlock();
      send({ type: 'unlocked' });
    } catch (error) {
      send({ type: 'unlock-failed', code: error.code });
    }
  } else if (line === 'exit') {
    break;
  }
}
lines.close();
await client.close();
