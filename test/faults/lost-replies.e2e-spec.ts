import { LockBackendError } from 'nestjs-distributed-lock';
import { useRedis } from '../harness/use-redis.js';
import { nextEvent, until } from '../harness/wait.js';

describe('an unlock whose reply is lost (Redis frozen mid-call)', () => {
  const redis = useRedis();

  it('is retried idempotently once Redis answers: the outer hold survives, then releases normally', async () => {
    const client = await redis.client({ operationTimeout: 200 });
    await client.runInNewContext(async () => {
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
    await client.runInNewContext(async () => {
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

  it("a phantom hold (a grant whose reply was lost) is corrected at the owner's next acquisition", async () => {
    const client = await redis.client();
    const admin = redis.server().client();
    await client.runInNewContext(async () => {
      const first = await client.lock('phantom:a');
      // What a lost grant reply leaves behind: Redis counts a hold this process never heard of.
      await admin.hincrby('lock:{phantom:a}', 'holds', 1);
      const second = await client.lock('phantom:a');
      expect(await client.getHoldCount('phantom:a')).toBe(2);
      await second.unlock();
      await first.unlock();
      expect(await client.isLocked('phantom:a')).toBe(false);
    });
  });

  it('a wait that ends during an outage leaves no phantom grant behind once Redis answers', async () => {
    const client = await redis.client({ operationTimeout: 100 });
    redis.server().pause();
    try {
      // The attempt reaches the frozen server and will be granted when it thaws; the caller gives up first.
      await expect(client.lock('phantom:b', { waitTime: 300 })).rejects.toBeInstanceOf(LockBackendError);
    } finally {
      redis.server().resume();
    }
    await until(async () => !(await client.isLocked('phantom:b')), 'the phantom grant to be released', 5000);
    const other = await redis.client();
    const handle = await other.tryLock('phantom:b');
    expect(handle).not.toBe(false);
    if (handle) await handle.unlock();
  });
});
