// Callers in several lock contexts of one process, each looping: take 1 or 2 permits of a semaphore,
// add them to a Redis counter of permits in use (INCRBY: atomic, so every overlap is counted), work a
// moment, take them off again, give the permits back. Reports the highest count it saw.
// argv: <protect: semaphore|none> <contexts> <iterations> <name> <permits> <inUseKey>
// env: DISTRIBUTED_LOCK_REDIS_* (any single-node mode). Prints {"type":"ready"}, waits for "go", prints {"type":"done","maxInUse"}.
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { LockClient } from './core.mjs';

const [protect, contexts, iterations, name, permits, inUseKey] = process.argv.slice(2);
const client = await LockClient.connect();
const semaphore = client.getSemaphore(name, { size: Number(permits) });
const redis = client.redis;
let maxInUse = 0;

async function use(count) {
  const inUse = await redis.incrby(inUseKey, count);
  maxInUse = Math.max(maxInUse, inUse);
  await sleep(1 + Math.floor(Math.random() * 3)); // the work that makes overlaps likely
  await redis.decrby(inUseKey, count);
}

const lines = createInterface({ input: process.stdin });
const go = new Promise((resolve) => lines.on('line', (line) => line === 'go' && resolve()));
console.log(JSON.stringify({ type: 'ready' }));
await go;

await Promise.all(
  Array.from({ length: Number(contexts) }, (_, context) =>
    client.runInNewContext(async () => {
      for (let i = 0; i < Number(iterations); i++) {
        const count = (context + i) % 3 === 0 ? 2 : 1; // a mix of one- and two-permit callers
        if (protect === 'semaphore') await semaphore.withPermits(count, () => use(count));
        else await use(count);
      }
    }),
  ),
);
console.log(JSON.stringify({ type: 'done', maxInUse }));
lines.close();
await client.close();
