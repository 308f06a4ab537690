import { LockClient } from 'nestjs-distributed-lock';
import { FaultProxy, stopAllFaultProxies } from 'redis-topology';
import { useRedis } from '../harness/use-redis.js';
import { nextEvent, until } from '../harness/wait.js';

/**
 * One client's link to Redis goes down while it waits (the others keep theirs): its subscription to
 * the lock's channel fails, and when the link is back it must be subscribed again and hear the next
 * release, instead of sleeping until its timer (the holder's lease, or the periodic re-check).
 */
describe("a waiter's link to Redis fails and comes back", () => {
  const redis = useRedis();
  afterEach(stopAllFaultProxies);

  it('the waiter is subscribed again once its link is back, and the next release wakes it', async () => {
    const proxy = await FaultProxy.start({ targetPort: redis.server().port });
    const holderClient = await redis.client();
    const waiterClient = await LockClient.connect({ connection: { mode: 'single', host: proxy.host, port: proxy.port }, operationTimeout: 500 });
    try {
      const holder = await holderClient.lock('outage:a', '30s');

      // The waiter's link breaks and cannot be made again for a while: its SUBSCRIBE fails.
      proxy.refuse();
      proxy.reset();
      const subscribeFailed = nextEvent(waiterClient.events, 'background-error', (event: { operation: string }) => event.operation === 'subscribe');
      const waiting = waiterClient.lock('outage:a', { waitTime: '30s' });
      await subscribeFailed;

      await proxy.accept();
      // Back: the channel is subscribed again (seen from Redis), without waiting for a timer.
      const channel = 'lock:{outage:a}:released';
      const admin = redis.server().client();
      await until(async () => Number(((await admin.pubsub('NUMSUB', channel)) as [string, number])[1]) === 1, 'the waiter to subscribe again', 5_000);

      // The release is heard: far sooner than the 30 s lease, or the 2 s re-check.
      await holder.unlock();
      const handle = await Promise.race([waiting, new Promise<'too late'>((resolve) => setTimeout(() => resolve('too late'), 1000).unref())]);
      expect(handle).not.toBe('too late');
      if (handle !== 'too late') await handle.unlock();
    } finally {
      await waiterClient.close();
    }
  });

  it('a waiting mark that cannot be removed while the link is down is reported as an unmark failure', async () => {
    const proxy = await FaultProxy.start({ targetPort: redis.server().port });
    const holderClient = await redis.client();
    const waiterClient = await LockClient.connect({ connection: { mode: 'single', host: proxy.host, port: proxy.port }, operationTimeout: 200 });
    try {
      const holder = await holderClient.lock('outage:c', '30s');
      const subscribed = nextEvent(waiterClient.events, 'subscription', (event: { subscribed: boolean }) => event.subscribed);
      const waiting = waiterClient.tryLock('outage:c', 500); // its first attempt marks its process as waiting
      await subscribed;
      proxy.blackhole({ drop: true });
      // (A phantom release of an attempt whose reply was lost may fail too: reported as a release.)
      const failure = nextEvent(waiterClient.events, 'background-error', (event: { operation: string }) => event.operation === 'unmark', 5_000);
      // The wait ends without the lock: false, or the backend error of an attempt the black-hole swallowed.
      const outcome = await waiting.catch((error: { code?: string }) => error.code);
      expect([false, 'LOCK_BACKEND_ERROR']).toContain(outcome);
      const [event] = await failure;
      expect(event).toMatchObject({ operation: 'unmark', name: 'outage:c' });
      // No reply within the operation timeout, or, once the failures opened the circuit, refused without being sent.
      expect((event as unknown as { error: Error }).error.message).toMatch(/no reply within 200 ms|the circuit breaker of .* is open/);
      await holder.unlock();
    } finally {
      proxy.heal();
      proxy.reset();
      await waiterClient.close();
    }
  });
});
