import { useRedis } from '../harness/use-redis.js';
import { until } from '../harness/wait.js';

/**
 * What a semaphore's free cycle costs Redis: the Redis calls its two scripts make (INFO commandstats,
 * the script calls themselves left out). It counts calls, not time: speed is judged by benchmarks.
 * Before the trimmed scripts a free cycle took 28 (every script read the clock, dropped expired
 * holders and dead waiters, and read the size and the permits in use separately); now 14 at most (13 to 14, with the
 * fencing counter's clock floor).
 */
describe('the Redis calls of a semaphore cycle', () => {
  const redis = useRedis();
  const CYCLES = 20;

  async function callsInScripts(): Promise<{ calls: number; publishes: number }> {
    const info = await redis.server().client().info('commandstats');
    let calls = 0;
    for (const [, command, count] of info.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)) {
      if (!/^(evalsha|eval|config\|resetstat|info|hello|ping|client\|.*|subscribe|unsubscribe|ssubscribe|sunsubscribe)$/.test(command!)) calls += Number(count);
    }
    return { calls, publishes: Number(/cmdstat_publish:calls=(\d+)/.exec(info)?.[1] ?? 0) };
  }

  it('a free cycle (one permit of a new semaphore, taken and released) makes at most 14 Redis calls', async () => {
    const client = await redis.client();
    await (await client.getSemaphore('calls:warm', { size: 3 }).acquire(1, '10s')).release(); // registers the process
    await redis.server().client().config('RESETSTAT');
    for (let i = 0; i < CYCLES; i++) await (await client.getSemaphore(`calls:${i}`, { size: 3 }).acquire(1, '10s')).release();
    const { calls, publishes } = await callsInScripts();
    expect(publishes).toBe(0);
    expect(calls / CYCLES).toBeLessThanOrEqual(14);
  });

  it('control: a release with a waiter in another process still tells it (one PUBLISH), and the waiter gets the permit', async () => {
    const client = await redis.client();
    const other = await redis.client();
    const semaphore = client.getSemaphore('calls:busy', { size: 1 });
    const holder = await semaphore.acquire(1, '10s');
    const waiting = other.getSemaphore('calls:busy', { size: 1 }).acquire(1, { waitTime: '5s' });
    await until(async () => (await semaphore.queueLength()) === 1, 'the waiter to queue');
    await redis.server().client().config('RESETSTAT');
    await holder.release();
    const next = await waiting;
    expect((await callsInScripts()).publishes).toBe(1);
    expect(next.isHeld).toBe(true);
    await next.release();
    expect(await semaphore.availablePermits()).toBe(1);
  });
});
