// Read-sleep-write on a Redis counter from several concurrent lock contexts in one process.
// argv: <protect: lock|none> <contexts> <iterations> <counterKey> <lockName>
// env: DISTRIBUTED_LOCK_REDIS_* (any deployment mode). Prints {"type":"ready"}, waits for "go" on stdin, prints {"type":"done"}.
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { LockClient } from './core.mjs';

const [protect, contexts, iterations, counterKey, lockName] = process.argv.slice(2);
const client = await LockClient.connect(); // configured from DISTRIBUTED_LOCK_REDIS_* like a deployment
const redis = client.redis;

async function criticalSection() {
  const value = Number((await redis.get(counterKey)) ?? 0);
  await sleep(1 + Math.floor(Math.random() * 2)); // the business work that makes a race window
  await redis.set(counterKey, value + 1);
}

const lines = createInterface({ input: process.stdin });
const go = new Promise((resolve) => lines.on('line', (line) => line === 'go' && resolve()));
console.log(JSON.stringify({ type: 'ready' }));
await go;

await Promise.all(
  Array.from({ length: Number(contexts) }, () =>
    client.runInNewContext(async () => {
      for (let i = 0; i < Number(iterations); i++) {
        if (protect === 'lock') await client.withLock(lockName, criticalSection);
        else await criticalSection();
      }
    }),
  ),
);
console.log(JSON.stringify({ type: 'done' }));
lines.close();
await client.close();
