import { LockBackendError, LockLostError } from 'nestjs-distributed-lock';
import { useRedis } from '../harness/use-redis.js';
import { nextEvent } from '../harness/wait.js';

describe('redis-server restarted while a lock is held and a waiter waits', () => {
  const redis = useRedis();

  it('the holder is told its lock is gone; the waiter and new callers recover once Redis is back', async () => {
    const holderClient = await redis.client({ watchdogTimeout: 300 });
    const waiterClient = await redis.client();
    const holder = await holderClient.lock('restart:a');
    const waiting = waiterClient.lock('restart:a', { waitTime: '20s' });
    await nextEvent(waiterClient.events, 'subscription', (e: { subscribed: boolean }) => e.subscribed);

    const aborted = new Promise<unknown>((resolve) => holder.signal.addEventListener('abort', () => resolve(holder.signal.reason), { once: true }));
    await redis.server().restart(); // no persistence: the lock is gone with the data

    expect(await aborted).toBeInstanceOf(LockLostError);
    const handle = await waiting;
    expect(handle.isHeld).toBe(true);
    await handle.unlock();

    const fresh = await holderClient.tryLock('restart:b', '5s');
    expect(fresh).not.toBe(false);
    if (fresh) await fresh.unlock();
  });

  it('while Redis is down, calls fail with a typed error instead of hanging', async () => {
    const client = await redis.client({ operationTimeout: 300 });
    await redis.server().stop();
    try {
      const error = await client.tryLock('restart:c').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockBackendError);
      expect((error as LockBackendError).code).toBe('LOCK_BACKEND_ERROR');
      // A wait without a deadline retries through a blip, but surfaces an outage after operationTimeout.
      await expect(client.lock('restart:c')).rejects.toBeInstanceOf(LockBackendError);
    } finally {
      await redis.server().restart();
    }
    const handle = await client.lock('restart:c', { waitTime: '10s' });
    await handle.unlock();
  });
});
