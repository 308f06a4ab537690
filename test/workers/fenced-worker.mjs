// A process of the fault-injection suite: several callers increment a fenced counter under one lock.
// env: DISTRIBUTED_LOCK_REDIS_* (the lock Redis, often through a fault proxy), RESOURCE_PORT (the protected resource's
// Redis, never faulted), LOCK_NAME, CONTEXTS, WATCHDOG (ms), WAIT_MS, OPERATION_TIMEOUT (ms).
// Each section: lock -> fenced read -> short work -> throwIfLost() -> fenced write -> unlock.
// Prints {"type":"ready"}, then {"type":"progress", accepted, lastAccepted, errors} every 200 ms; at the
// end, "done" with every accepted write's time (on the shared monotonic clock, shared-clock.mjs), the counts, and any lock reported lost after its
// unlock() had resolved (lostAfterUnlock).
// stdin: "hold-next" -> the next holder reports {"type":"holding"} and lingers 300 ms in its section
// (so the test can pause or kill it while it holds); "stop" -> {"type":"done", ...} and exit.
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { LockClient } from './core.mjs';
import { FencedCounter } from '../harness/fenced-counter.mjs';
import { sharedNow as now } from '../harness/shared-clock.mjs';

const env = process.env;
const send = (message) => console.log(JSON.stringify(message));
const client = await LockClient.connect({ watchdogTimeout: Number(env.WATCHDOG ?? 1000), operationTimeout: Number(env.OPERATION_TIMEOUT ?? 500) });
const resourceRedis = new Redis({ host: '127.0.0.1', port: Number(env.RESOURCE_PORT), maxRetriesPerRequest: 1 });
const counter = new FencedCounter(resourceRedis);

const accepted = []; // times of accepted writes
let refused = 0; // fenced reads or writes refused: a stale holder stopped by the resource
let abandoned = 0; // sections that found the lock lost (throwIfLost) before writing
const errors = {}; // by code
const untyped = [];
// Tokens whose unlock() resolved, and 'lost' reports of any of them afterwards: a lock reported lost
// after its successful unlock means Redis kept a hold the caller did not know of.
const unlocked = new Set();
const lostAfterUnlock = [];
client.events.on('lost', ({ token, reason }) => {
  if (unlocked.has(token)) lostAfterUnlock.push({ token, reason });
});
let stopping = false;
let holdNext = false;
const typed = (error) => typeof error?.code === 'string' && error.code.startsWith('LOCK_');
const count = (where, error) => {
  if (typed(error)) errors[error.code] = (errors[error.code] ?? 0) + 1;
  else untyped.push(`${where}: ${error?.name}: ${error?.message}`);
};
process.on('unhandledRejection', (error) => untyped.push(`unhandled rejection: ${error?.message ?? error}`));
client.events.on('background-error', () => undefined); // reported as events, by design: not errors of the calls

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (line === 'stop') stopping = true;
  if (line === 'hold-next') holdNext = true;
});
const progress = setInterval(() => send({ type: 'progress', accepted: accepted.length, lastAccepted: accepted.at(-1) ?? 0, errors, refused, abandoned }), 200);
send({ type: 'ready', pid: process.pid });

await Promise.all(
  Array.from({ length: Number(env.CONTEXTS ?? 2) }, () =>
    client.runInNewContext(async () => {
      while (!stopping) {
        let handle;
        try {
          handle = await client.lock(env.LOCK_NAME, { waitTime: Number(env.WAIT_MS ?? 2000) });
        } catch (error) {
          count('lock', error);
          await sleep(20);
          continue;
        }
        try {
          if (holdNext) {
            holdNext = false;
            send({ type: 'holding', token: handle.token });
            await sleep(300);
          }
          const read = await counter.read(handle.token);
          if (!read.accepted) {
            refused++;
          } else {
            await sleep(2);
            handle.throwIfLost();
            const write = await counter.write(handle.token, read.value + 1);
            if (write.accepted) accepted.push(now());
            else refused++;
          }
        } catch (error) {
          if (error?.code === 'LOCK_LOST') abandoned++;
          else if (!typed(error)) count('section', error);
          else count('section', error);
        }
        try {
          await handle.unlock();
          unlocked.add(handle.token);
        } catch (error) {
          count('unlock', error);
        }
      }
    }),
  ),
);
clearInterval(progress);
lines.close();
await client.close();
resourceRedis.disconnect();
send({ type: 'done', accepted, refused, abandoned, errors, untyped, lostAfterUnlock });
