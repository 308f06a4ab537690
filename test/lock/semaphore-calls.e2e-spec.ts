import { LockAcquireAbortedError } from 'nestjs-distributed-lock';
import { useRedis } from '../harness/use-redis.js';
import { until } from '../harness/wait.js';

/**
 * What a semaphore's free cycle costs Redis: the Redis calls its two scripts make (INFO commandstats,
 * the script calls themselves left out). It counts calls, not time: speed is judged by benchmarks.
 * Before the trimmed scripts a free cycle took 28 (every script read the clock, dropped expired
 * holders and dead waiters, and read the size and the permits in use separately); then 14 at most (13 to
 * 14, with the fencing counter's clock floor); now 12 at most: the state hash counts the waiters in line
 * (`q`), so the acquire and the release of a semaphore nobody waits for do not look at the line.
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

  it('a free cycle (one permit of a new semaphore, taken and released) makes at most 12 Redis calls', async () => {
    const client = await redis.client();
    await (await client.getSemaphore('calls:warm', { size: 3 }).acquire(1, '10s')).release(); // registers the process
    await redis.server().client().config('RESETSTAT');
    for (let i = 0; i < CYCLES; i++) await (await client.getSemaphore(`calls:${i}`, { size: 3 }).acquire(1, '10s')).release();
    const { calls, publishes } = await callsInScripts();
    expect(publishes).toBe(0);
    expect(calls / CYCLES).toBeLessThanOrEqual(12);
  });

  it('control: the waiting count follows the line, so a newcomer never takes a free permit ahead of a waiter', async () => {
    const client = await redis.client();
    const other = await redis.client();
    const admin = redis.server().client();
    const state = 'lock:{calls:line}:semaphore';
    const counted = async (): Promise<[number, number]> => [Number((await admin.hget(state, 'q')) ?? 0), await admin.zcard(`${state}:queue`)];
    const semaphore = client.getSemaphore('calls:line', { size: 2 });
    const holder = await semaphore.acquire(1, '10s'); // one permit left free
    const abort = new AbortController();
    const wantsTwo = other.getSemaphore('calls:line', { size: 2 }).acquire(2, { waitTime: '5s', signal: abort.signal });
    await until(async () => (await semaphore.queueLength()) === 1, 'the two-permit waiter to queue');
    expect(await counted()).toEqual([1, 1]);
    // The free permit is not the newcomer's: the first in line waits for two. With a count of 0 the
    // acquire would not look at the line and take it.
    expect(await semaphore.tryAcquire(1)).toBe(false);
    abort.abort();
    await expect(wantsTwo).rejects.toBeInstanceOf(LockAcquireAbortedError);
    expect(await counted()).toEqual([0, 0]);
    const newcomer = await semaphore.tryAcquire(1);
    expect(newcomer).not.toBe(false);
    // A waiter granted on a release leaves the line in the same script: the count comes back to 0.
    const waiting = other.getSemaphore('calls:line', { size: 2 }).acquire(1, { waitTime: '5s' });
    await until(async () => (await semaphore.queueLength()) === 1, 'the next waiter to queue');
    expect(await counted()).toEqual([1, 1]);
    await holder.release();
    await (await waiting).release();
    expect(await counted()).toEqual([0, 0]);
    if (newcomer) await newcomer.release();
    expect(await semaphore.availablePermits()).toBe(2);
    admin.disconnect();
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
