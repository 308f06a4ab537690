import { LockAcquireAbortedError, LockClientClosedError, type LockClient } from 'nestjs-distributed-lock';
import { nextEvent, until } from '../../harness/wait.js';
import { itFull, type ModeFixture } from '../fixture.js';

function subscribed(client: LockClient, value: boolean): Promise<unknown> {
  return nextEvent(client.events, 'subscription', (e: { subscribed: boolean }) => e.subscribed === value);
}

export function waiterCleanupSuite(fx: ModeFixture): void {
  describe('a waiter that gives up leaves nothing behind', () => {
    it('after a wait times out: no subscription, no channel state, nothing held', async () => {
      const client = await fx.client();
      const holder = await client.lock('gone:a', '30s');
      const unsubscribed = subscribed(client, false);
      expect(await client.tryLock('gone:a', 100)).toBe(false);
      await unsubscribed;
      expect(await fx.subscribers('lock:{gone:a}:released')).toBe(0);
      expect(client.stats()).toEqual({ held: 1, renewing: 0, waitingChannels: 0 });
      await holder.unlock();
      expect(client.stats()).toEqual({ held: 0, renewing: 0, waitingChannels: 0 });
    });

    it('after an abort: a typed error, no subscription', async () => {
      const client = await fx.client();
      const holder = await client.lock('gone:b', '30s');
      const controller = new AbortController();
      const waiting = client.lock('gone:b', { signal: controller.signal });
      await subscribed(client, true);
      expect(await fx.subscribers('lock:{gone:b}:released')).toBeGreaterThan(0);
      const unsubscribed = subscribed(client, false);
      controller.abort();
      await expect(waiting).rejects.toBeInstanceOf(LockAcquireAbortedError);
      await unsubscribed;
      expect(await fx.subscribers('lock:{gone:b}:released')).toBe(0);
      expect(client.stats().waitingChannels).toBe(0);
      await holder.unlock();
    });

    itFull(fx)('a waiter that leaves does not take the wake-up meant for the one behind it', async () => {
      const client = await fx.client();
      const holder = await client.lock('gone:c', '30s');
      const quitter = client.tryLock('gone:c', 150);
      const stayer = client.tryLock('gone:c', '10s');
      expect(await quitter).toBe(false);
      await holder.unlock();
      const handle = await stayer; // must not sit out the 30 s lease
      expect(handle).not.toBe(false);
      if (handle) await handle.unlock();
    });

    itFull(fx)('many waiters on few keys, all served: no subscription, timer or listener is left', async () => {
      const client = await fx.client();
      const KEYS = ['gone:many:1', 'gone:many:2', 'gone:many:3'];
      const holders = await Promise.all(KEYS.map((key) => client.lock(key)));
      const served: string[] = [];
      const waiters = Array.from({ length: 30 }, (_, i) =>
        client.withLock(
          KEYS[i % KEYS.length]!,
          async () => {
            served.push(KEYS[i % KEYS.length]!);
          },
          { waitTime: '20s' },
        ),
      );
      await Promise.all(holders.map((holder) => holder.unlock()));
      await Promise.all(waiters);
      expect(served).toHaveLength(30);
      await until(() => client.stats().waitingChannels === 0, 'every channel to be unsubscribed');
      expect(client.stats()).toEqual({ held: 0, renewing: 0, waitingChannels: 0 });
      for (const key of KEYS) expect(await fx.subscribers(`lock:{${key}}:released`)).toBe(0);
      expect(client.events.listenerCount('acquired')).toBe(0);
    });

    itFull(fx)('closing the client fails pending waits with a typed error', async () => {
      const client = await fx.client();
      const other = await fx.client();
      const holder = await other.lock('gone:d', '30s');
      const waiting = client.lock('gone:d');
      await subscribed(client, true);
      const failed = expect(waiting).rejects.toBeInstanceOf(LockClientClosedError); // fails while close() is under way
      await client.close();
      await failed;
      await expect(client.lock('gone:e')).rejects.toBeInstanceOf(LockClientClosedError);
      await holder.unlock();
    });
  });
}
