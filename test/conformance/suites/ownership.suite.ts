import { LockLostError, LockNotHeldError } from 'nestjs-distributed-lock';
import { nextEvent, until } from '../../harness/wait.js';
import { itFull, type ModeFixture } from '../fixture.js';

export function ownershipSuite(fx: ModeFixture): void {
  describe('only the holder releases', () => {
    it('a non-owner unlock is a typed error and leaves the holder untouched', async () => {
      const client = await fx.client();
      const holder = await client.runInNewContext(() => client.lock('own:a', '30s'));
      // RedLock answers once a majority granted it: the last master's grant may still be on its way.
      await until(async () => !(await fx.hget('lock:{own:a}', 'owner')).includes(null), 'every node to hold it');
      const before = await fx.hget('lock:{own:a}', 'owner');
      await client.runInNewContext(async () => {
        await expect(client.unlock('own:a')).rejects.toBeInstanceOf(LockNotHeldError);
      });
      expect(await fx.hget('lock:{own:a}', 'owner')).toEqual(before);
      expect(holder.isHeld).toBe(true);
      expect(await client.remainTimeToLive('own:a')).toBeGreaterThan(25_000);
      await holder.unlock();
    });

    itFull(fx)('a double unlock through one handle is a typed error, and does not touch a later holder', async () => {
      const client = await fx.client();
      const first = await client.lock('own:b');
      await first.unlock();
      const second = await client.lock('own:b');
      const error = await first.unlock().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockNotHeldError);
      expect((error as LockNotHeldError).message).toMatch(/already released/);
      expect(second.isHeld).toBe(true);
      expect(await client.isLocked('own:b')).toBe(true);
      await second.unlock();
    });

    it('unlock after the lease ran out is a typed error; the signal says why; the next holder keeps its lock', async () => {
      const client = await fx.client();
      const other = await fx.client();
      const expired = await client.lock('own:c', 100);
      const lost = nextEvent(client.events, 'lost');
      // Bounded, so that a hang names its step (this test once ran past jest's 30 s in a cluster CI run).
      await until(() => expired.signal.aborted, "the lease's end to abort the handle's signal");
      expect(expired.signal.reason).toBeInstanceOf(LockLostError);
      expect((expired.signal.reason as LockLostError).reason).toBe('lease-expired');
      const [event] = await lost;
      expect(event).toMatchObject({ name: 'own:c', reason: 'lease-expired' });

      const next = await other.lock('own:c', { waitTime: '5s' });
      expect(next.token).toBeGreaterThan(expired.token);
      await expect(expired.unlock()).rejects.toBeInstanceOf(LockNotHeldError);
      expect(next.isHeld).toBe(true);
      // A majority of the nodes (one of one outside RedLock) holds the next holder's lifetime, and none a
      // later token. (RedLock answers once a majority granted and raised: the last master's grant or raise
      // may still be on its way, or that master refused it, holding the expired lease a moment longer.)
      const nextKept = async (): Promise<boolean> => {
        const tokens = await fx.hget('lock:{own:c}', 'token');
        const holding = tokens.filter((token) => token !== null && Number(token) === next.token).length;
        return holding > tokens.length / 2 && tokens.every((token) => token === null || Number(token) <= next.token);
      };
      await until(nextKept, "the next holder's token on a majority of the nodes", 5_000);
      expect(await nextKept()).toBe(true);
      await next.unlock();
    });

    it('knowing the name without the owner id is not enough to renew or release', async () => {
      const client = await fx.client();
      const intruder = await fx.client();
      const handle = await client.lock('own:d', '30s');
      const lock = intruder.getLock('own:d');
      // The owner id is `<random client id>:<context>`; a guess with the right shape still fails.
      expect(await lock.release('00000000-0000-4000-8000-000000000000:1', true)).toEqual({ outcome: 'not-owner' });
      expect(await lock.renew('00000000-0000-4000-8000-000000000000:1', 60_000, undefined)).toEqual({ renewed: false, lost: true });
      expect(await intruder.isLocked('own:d')).toBe(true);
      expect(await intruder.remainTimeToLive('own:d')).toBeLessThanOrEqual(30_000);
      await handle.unlock();
    });

    it('forceUnlock removes any holder, and lets waiters in; the holder learns it at its next touch', async () => {
      const client = await fx.client();
      const admin = await fx.client();
      const handle = await client.lock('own:e');
      const waiter = client.lock('own:e', { waitTime: '5s' });
      await nextEvent(client.events, 'subscription', (e: { subscribed: boolean }) => e.subscribed);
      expect(await admin.forceUnlock('own:e')).toBe(true);
      const next = await waiter;
      expect(next.token).toBeGreaterThan(handle.token);
      await expect(handle.unlock()).rejects.toBeInstanceOf(LockNotHeldError);
      expect(handle.signal.aborted).toBe(true);
      await next.unlock();
      expect(await admin.forceUnlock('own:e')).toBe(false);
    });
  });
}
