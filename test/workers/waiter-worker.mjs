// Waits for a plain lock on command, for hand-over tests across processes.
// env: DISTRIBUTED_LOCK_REDIS_* (any mode), LOCK_NAME. stdin: "wait" -> a new lock context calls lock(LOCK_NAME, 5000)
// and prints {"type":"queued"} once it waits (subscribed), then {"type":"acquired","token"} and
// releases at once. "exit" closes the client. Prints {"type":"ready"} first.
import { createInterface } from 'node:readline';
import { LockClient } from './core.mjs';

const send = (message) => console.log(JSON.stringify(message));
const client = await LockClient.connect();
client.events.on('subscription', ({ subscribed }) => subscribed && send({ type: 'queued' }));
const running = [];

const lines = createInterface({ input: process.stdin });
send({ type: 'ready' });
for await (const line of lines) {
  if (line === 'wait') {
    running.push(
      client.runInNewContext(async () => {
        const handle = await client.lock(process.env.LOCK_NAME, 5000);
        send({ type: 'acquired', token: handle.token });
        await handle.unlock();
      }),
    );
  } else if (line === 'exit') {
    break;
  }
}
lines.close();
await Promise.allSettled(running);
await client.close();
