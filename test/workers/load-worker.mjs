// Continuous lock-protected increments until "stop" on stdin; records every critical section and every
// error, for failover tests. argv: <contexts> <lockName> <counterKey>. env: DISTRIBUTED_LOCK_* (any mode).
// A section is [acquired, release about to be sent, token, others inside]. Times are on the machine's
// monotonic clock, shared by all processes (shared-clock.mjs): an overlap of two sections is a double
// grant. "Others inside" needs no clock: each section adds its own id to the set <counterKey>:inside
// on entry and removes it on exit; the number of other ids the set held at entry (one script, so one
// instant) is what other sections were inside then (-1: the entry's reply was lost). Prints
// {"type":"progress"} twice a second (with the last error and the lock connection's status) and
// {"type":"done", sections, errors}.
// Optional env: LOCK_WAIT_MS (default 3000), HANDOVER_TURN (the client's handoverTurn option),
// SECTION_MS (the section only sleeps that long, with no Redis I/O of its own, instead of the counter
// and the inside set), LOCK_TEST_CLIENT=node-redis (a node-redis client given as `client`: see
// worker-lock-client.mjs), NO_LOCK=1 (the control: the same sections without the lock).
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { sharedNow as now } from '../harness/shared-clock.mjs';
import { lockClientFromEnv } from './worker-lock-client.mjs';

const [contexts, lockName, counterKey] = process.argv.slice(2);
const insideKey = `${counterKey}:inside`;
const ENTER = "redis.call('SADD', KEYS[1], ARGV[1]) return redis.call('SCARD', KEYS[1]) - 1";
const LEAVE = "return redis.call('SREM', KEYS[1], ARGV[1])";
const withoutLock = process.env.NO_LOCK === '1';
let entries = 0;
const send = (message) => console.log(JSON.stringify(message));
const made = await lockClientFromEnv(process.env.HANDOVER_TURN ? { handoverTurn: process.env.HANDOVER_TURN } : {});
const { client, data } = made;
const waitTime = Number(process.env.LOCK_WAIT_MS ?? 3000);
const sectionMs = process.env.SECTION_MS === undefined ? undefined : Number(process.env.SECTION_MS);
const sections = [];
const errors = [];
let stopping = false;
const code = (error) =>
  typeof error?.code === 'string' && error.code.startsWith('LOCK_')
    ? `${error.code} ${String(error.message).slice(0, 120)}`
    : `UNTYPED ${error?.name}: ${error?.message}`;

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (line === 'stop') stopping = true;
});
// With the last error and the lock connection's state, so that a test that times out says why.
const progress = setInterval(
  () =>
    send({
      type: 'progress',
      sections: sections.length,
      last: sections.at(-1)?.[0] ?? 0,
      errors: errors.length,
      lastError: errors.at(-1)?.[1]?.slice(0, 160),
      connection: made.status(),
    }),
  500,
);
send({ type: 'ready', target: client.target });

/** Takes `id` out of the inside set, retrying (removing is idempotent) until Redis confirms it, for up to 10 s. */
async function leave(id) {
  for (let attempt = 0; ; attempt++) {
    try {
      await data.script(LEAVE, [insideKey], [id]);
      return;
    } catch (error) {
      if (attempt >= 100) {
        errors.push([now(), `section leaving the inside set: ${code(error)}`]);
        return;
      }
      await sleep(100);
    }
  }
}

await Promise.all(
  Array.from({ length: Number(contexts) }, () =>
    client.runInNewContext(async () => {
      while (!stopping) {
        let handle;
        try {
          handle = withoutLock ? { token: 0, unlock: async () => undefined } : await client.lock(lockName, { waitTime });
        } catch (error) {
          errors.push([now(), code(error)]);
          await sleep(20);
          continue;
        }
        const start = now();
        const id = `${process.pid}:${++entries}`;
        let others = -1;
        try {
          if (sectionMs !== undefined) {
            others = 0; // not checked: no Redis I/O in the section
            await sleep(sectionMs);
          } else {
            others = Number(await data.script(ENTER, [insideKey], [id]));
            const value = Number((await data.get(counterKey)) ?? 0);
            await sleep(1);
            await data.set(counterKey, value + 1);
          }
        } catch (error) {
          errors.push([now(), `section ${code(error)}`]);
        }
        const end = now();
        if (sectionMs === undefined) await leave(id);
        sections.push([start, end, handle.token, others]);
        try {
          await handle.unlock();
        } catch (error) {
          errors.push([now(), `unlock ${code(error)}`]);
        }
      }
    }),
  ),
);
clearInterval(progress);
send({ type: 'done', sections, errors });
lines.close();
await made.close();
