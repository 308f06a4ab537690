import { useRedis } from '../harness/use-redis.js';
import { nextEvent } from '../harness/wait.js';

/**
 * A release tells waiting processes through pub/sub; when no process ever marked itself as waiting
 * while the lock was held (the plain lock's waiters always do), there is nobody to tell, and the
 * release skips the PUBLISH: one Redis call less on the uncontended path. Wake-ups themselves are
 * tested in every mode by the conformance suite.
 */
describe('the release publishes only when someone may be waiting', () => {
  const redis = useRedis();

  async function publishes(): Promise<number> {
    const info = await redis.server().client().info('commandstats');
    return Number(/cmdstat_publish:calls=(\d+)/.exec(info)?.[1] ?? 0);
  }

  it('an uncontended plain lock: no PUBLISH; with a waiter in another process: one, and the waiter gets it', async () => {
    const client = await redis.client();
    const other = await redis.client();
    await redis.server().client().config('RESETSTAT');
    for (let i = 0; i < 10; i++) await (await client.lock(`quiet:${i}`, '10s')).unlock();
    expect(await publishes()).toBe(0);

    const holder = await client.lock('quiet:busy', '10s');
    const waiting = other.lock('quiet:busy', { waitTime: '5s' });
    await nextEvent(other.events, 'subscription', (event: { subscribed: boolean }) => event.subscribed);
    await holder.unlock();
    await (await waiting).unlock();
    expect(await publishes()).toBeGreaterThanOrEqual(1);
  });

  it('control: the fair lock, whose waiters do not mark their process, always publishes', async () => {
    const client = await redis.client();
    await redis.server().client().config('RESETSTAT');
    await (await client.getFairLock('quiet:fair').lock('10s')).unlock();
    expect(await publishes()).toBe(1);
  });
});
