// Holds and waits for locks of every kind on command, for the lock board's browser test.
// env: DISTRIBUTED_LOCK_REDIS_* (any single-node mode), DISTRIBUTED_LOCK_INSTANCE_NAME (its label on the board).
// stdin, one command a line (NAME without spaces):
//   hold plain|fair NAME      -> {"type":"held","name","token"}   (watchdog lease)
//   read NAME                 -> {"type":"held","name","token"}   (a read lock)
//   permits NAME SIZE COUNT   -> {"type":"held","name","token"}   (COUNT permits of a semaphore of SIZE)
//   wait plain|fair NAME      -> {"type":"waiting","name"} at once; {"type":"held",...} once granted
//   wait permits NAME SIZE COUNT, elect NAME (-> {"type":"elected","name","term"})
//   release NAME              -> {"type":"released","name"}; exit -> closes the client.
// Prints {"type":"ready"} first and {"type":"lost","name"} when a hold is lost (e.g. force-unlocked).
import { createInterface } from 'node:readline';
import { LockClient } from './core.mjs';

const send = (message) => console.log(JSON.stringify(message));
const client = await LockClient.connect();
client.events.on('lost', ({ name }) => send({ type: 'lost', name }));
const handles = new Map();
const running = [];

function take(kind, name, size, count, waitTime) {
  return client.runInNewContext(() => {
    if (kind === 'plain') return client.lock(name, { waitTime });
    if (kind === 'fair') return client.getFairLock(name).lock({ waitTime });
    if (kind === 'read') return client.getReadWriteLock(name).readLock().lock({ waitTime });
    return client.getSemaphore(name, { size: Number(size) }).acquire(Number(count), { waitTime });
  });
}

function hold(kind, name, size, count, waitTime) {
  const done = take(kind, name, size, count, waitTime).then(
    (handle) => {
      handles.set(name, [...(handles.get(name) ?? []), handle]);
      send({ type: 'held', name, token: handle.token });
    },
    (error) => send({ type: 'failed', name, code: error.code }),
  );
  running.push(done);
  return done;
}

send({ type: 'ready' });
const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const [command, ...args] = line.trim().split(/\s+/);
  if (command === 'hold') await hold(args[0], args[1]);
  else if (command === 'read') await hold('read', args[0]);
  else if (command === 'permits') await hold('permits', args[0], args[1], args[2]);
  else if (command === 'wait') {
    const [kind, name, size, count] = args;
    void hold(kind, name, size, count, '60s');
    send({ type: 'waiting', name });
  } else if (command === 'elect') {
    const [name] = args;
    client.elect(name, { onElected: (leadership) => send({ type: 'elected', name, term: leadership.term }) });
    send({ type: 'candidate', name });
  } else if (command === 'release') {
    const [name] = args;
    await Promise.all((handles.get(name) ?? []).map((handle) => handle.unlock().catch(() => undefined)));
    handles.delete(name);
    send({ type: 'released', name });
  } else if (command === 'exit') break;
}
lines.close();
await client.close();
await Promise.allSettled(running);
