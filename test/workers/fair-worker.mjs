// Queues for a fair lock on command, for arrival-order and crashed-waiter tests.
// env: DISTRIBUTED_LOCK_REDIS_* (any single-node mode), LOCK_NAME, QUEUE_TIMEOUT (ms), LOG_KEY (a Redis list).
// stdin: "acquire <tag>" -> a new lock context waits for the lock; once granted it RPUSHes <tag> to
// LOG_KEY, prints {"type":"acquired","tag","token"} and releases at once. "exit" closes the client.
import { createInterface } from 'node:readline';
import { LockClient } from './core.mjs';

const send = (message) => console.log(JSON.stringify(message));
const client = await LockClient.connect();
const lock = client.getFairLock(process.env.LOCK_NAME, { queueTimeout: Number(process.env.QUEUE_TIMEOUT) });
const running = [];

const lines = createInterface({ input: process.stdin });
send({ type: 'ready' });
for await (const line of lines) {
  const [command, tag] = line.split(' ');
  if (command === 'acquire') {
    running.push(
      client.runInNewContext(() =>
        lock.withLock(async (handle) => {
          await client.redis.rpush(process.env.LOG_KEY, tag);
          send({ type: 'acquired', tag, token: handle.token });
        }),
      ),
    );
  } else if (command === 'exit') {
    break;
  }
}
lines.close();
await Promise.allSettled(running);
await client.close();
