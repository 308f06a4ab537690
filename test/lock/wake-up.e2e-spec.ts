import type { Redis } from 'ioredis';
import type { LockHandle } from 'nestjs-distributed-lock';
import { useRedis } from '../harness/use-redis.js';
import { stopAllWorkers, WorkerProcess } from '../harness/worker-process.js';
import { nextEvent, until } from '../harness/wait.js';

/** Script runs (EVAL + EVALSHA: ioredis sends a script's first run on a connection as EVAL) since the last CONFIG RESETSTAT. */
async function scriptCalls(admin: Redis): Promise<number> {
  const stats = await admin.info('commandstats');
  return stats
    .split('\n')
    .filter((line) => /^cmdstat_eval(sha)?:/.test(line))
    .reduce((sum, line) => sum + Number(/calls=(\d+)/.exec(line)![1]), 0);
}

describe('waiting is woken by the release, not by polling', () => {
  const redis = useRedis();
  afterEach(stopAllWorkers);

  it('a waiter gets the lock right after the release although the lease had 30 s left', async () => {
    const client = await redis.client();
    const holder = await client.lock('wake:a'); // watchdog lease: 30 s
    const waiting = client.tryLock('wake:a', '5s');
    await nextEvent(client.events, 'subscription', (e: { subscribed: boolean }) => e.subscribed);
    expect(await client.remainTimeToLive('wake:a')).toBeGreaterThan(25_000);
    await holder.unlock();
    // Polling at the lease would take 30 s; the 5 s wait can only succeed through the notification.
    const handle = await waiting;
    expect(handle).not.toBe(false);
    if (handle) await handle.unlock();
  });

  it('a release in another process wakes the waiter here', async () => {
    const client = await redis.client();
    const worker = WorkerProcess.start('holder-worker.mjs', { REDIS_PORT: redis.server().port, LOCK_NAME: 'wake:b', LEASE: 'watchdog' });
    const acquired = await worker.waitForType('acquired');
    const waiting = client.tryLock('wake:b', '5s');
    await nextEvent(client.events, 'subscription', (e: { subscribed: boolean }) => e.subscribed);
    worker.send('unlock');
    await worker.waitForType('unlocked');
    const handle = await waiting;
    expect(handle).not.toBe(false);
    if (handle) {
      expect(handle.token).toBeGreaterThan(acquired.token as number);
      await handle.unlock();
    }
    worker.send('exit');
    expect((await worker.exited).code).toBe(0);
  });

  it('one release wakes one local waiter: handing over costs one attempt, not one per waiter', async () => {
    const client = await redis.client();
    const admin = redis.server().client();
    const WAITERS = 5;
    const holder = await client.lock('wake:c', '30s');
    const granted: LockHandle[] = [];
    let settled = 0;
    const waiters = Array.from({ length: WAITERS }, () =>
      client.lock('wake:c', { leaseTime: '30s', waitTime: '10s' }).then((handle) => {
        granted.push(handle);
        return handle;
      }).finally(() => settled++),
    );
    // Each waiter makes its first attempt, joins, and retries once after the subscription.
    await nextEvent(client.events, 'subscription', (e: { subscribed: boolean }) => e.subscribed);
    await until(async () => (await scriptCalls(admin)) >= 1 + 2 * WAITERS, 'every waiter to retry after subscribing');

    let previous: LockHandle = holder;
    for (let round = 0; round < WAITERS; round++) {
      await admin.config('RESETSTAT');
      const next = nextEvent(client.events, 'acquired');
      await previous.unlock(); // 1 release script
      await next;
      // 1 release + 1 attempt by the woken waiter. A herd would add one attempt per remaining waiter.
      expect(await scriptCalls(admin)).toBe(2);
      previous = granted[round]!;
    }
    await previous.unlock();
    await Promise.all(waiters);
    expect(settled).toBe(WAITERS);
  });
});
