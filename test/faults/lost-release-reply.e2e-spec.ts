import { LockBackendError } from 'nestjs-distributed-lock';
import { useRedis } from '../harness/use-redis.js';
import { nextEvent } from '../harness/wait.js';

describe('an unlock whose reply is lost (Redis frozen mid-call)', () => {
  const redis = useRedis();

  it('is retried idempotently once Redis answers: the outer hold survives, then releases normally', async () => {
    const client = await redis.client({ operationTimeout: 200 });
    await client.runInContext(async () => {
      const outer = await client.lock('lost-reply:a');
      const inner = await client.lock('lost-reply:a');
      redis.server().pause();
      // The release reaches Redis but the reply does not come back in time: outcome unknown.
      await expect(inner.unlock()).rejects.toBeInstanceOf(LockBackendError);
      redis.server().resume();
      // The retry expects 2 holds, finds 1 (the first release did go through), and applies nothing.
      await outer.unlock();
      expect(await client.isLocked('lost-reply:a')).toBe(false);
      expect(client.stats()).toEqual({ held: 0, renewing: 0, waitingChannels: 0 });
    });
  });

  it('the same owner taking the lock again waits for the retry, and holds it once, not twice', async () => {
    const client = await redis.client({ operationTimeout: 200 });
    await client.runInContext(async () => {
      const first = await client.lock('lost-reply:b');
      const firstSettled = nextEvent(client.events, 'released', (e: { name: string }) => e.name === 'lost-reply:b');
      redis.server().pause();
      await expect(first.unlock()).rejects.toBeInstanceOf(LockBackendError);
      redis.server().resume();
      const again = await client.lock('lost-reply:b', { waitTime: '5s' });
      // Once the retried release has settled, the new hold must still be there: the retry must not
      // have been applied to it (without the gate it would be, and the lock would be gone).
      await firstSettled;
      expect(await client.getHoldCount('lost-reply:b')).toBe(1);
      expect(again.isHeld).toBe(true);
      await again.unlock();
      expect(await client.isLocked('lost-reply:b')).toBe(false);
    });
  });
});
