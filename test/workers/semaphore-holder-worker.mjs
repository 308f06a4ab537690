// Holds permits of a semaphore with a watchdog-renewed lease and reports on it, for crash tests.
// env: DISTRIBUTED_LOCK_REDIS_* (any single-node mode), SEMAPHORE, PERMITS (its size), TAKE (permits to take), WATCHDOG (ms).
// Prints {"type":"acquired","token"}, then {"type":"renewed","startedAt"} at every renewal (startedAt:
// Date.now() when that renewal was sent; its lease ends no earlier than startedAt + WATCHDOG). "exit" on stdin closes.
import { createInterface } from 'node:readline';
import { LockClient } from './core.mjs';

const send = (message) => console.log(JSON.stringify(message));
const client = await LockClient.connect({ watchdogTimeout: Number(process.env.WATCHDOG) });
client.events.on('renewed', ({ tookMs }) => send({ type: 'renewed', startedAt: Date.now() - tookMs }));
const semaphore = client.getSemaphore(process.env.SEMAPHORE, { size: Number(process.env.PERMITS) });
const handle = await semaphore.acquire(Number(process.env.TAKE));
send({ type: 'acquired', token: handle.token, permits: handle.permits });

const lines = createInterface({ input: process.stdin });
for await (const line of lines) if (line === 'exit') break;
lines.close();
await client.close();
