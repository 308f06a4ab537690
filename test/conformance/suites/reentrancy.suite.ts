import { LockNotHeldError } from 'nestjs-distributed-lock';
import { itFull, type ModeFixture } from '../fixture.js';

export function reentrancySuite(fx: ModeFixture): void {
  describe('reentrancy and lock contexts', () => {
    it('the same context re-enters: holds go up and down, the token stays, the key goes at zero', async () => {
      const client = await fx.client();
      await client.runInNewContext(async () => {
        const first = await client.lock('re:a');
        const second = await client.lock('re:a');
        expect(second.token).toBe(first.token);
        expect(await client.getHoldCount('re:a')).toBe(2);
        expect(await client.isHeldByCurrentContext('re:a')).toBe(true);
        expect(await client.isHeldByCurrentThread('re:a')).toBe(true);

        await client.unlock('re:a');
        expect(await client.getHoldCount('re:a')).toBe(1);
        expect(await client.isLocked('re:a')).toBe(true);

        await second.unlock();
        expect(await client.getHoldCount('re:a')).toBe(0);
        expect(await fx.keyExistsAnywhere('lock:{re:a}')).toBe(false);
        expect(await client.remainTimeToLive('re:a')).toBe(-2);
        // The first handle's hold was released by name: its own unlock has nothing left to release.
        await expect(first.unlock()).rejects.toBeInstanceOf(LockNotHeldError);
      });
    });

    it('another context is another owner: it cannot enter, and sees no hold of its own', async () => {
      const client = await fx.client();
      const holder = await client.runInNewContext(() => client.lock('re:b'));
      await client.runInNewContext(async () => {
        expect(await client.tryLock('re:b')).toBe(false);
        expect(await client.getHoldCount('re:b')).toBe(0);
        expect(await client.isHeldByCurrentContext('re:b')).toBe(false);
        await expect(client.unlock('re:b')).rejects.toBeInstanceOf(LockNotHeldError);
      });
      expect(await client.isLocked('re:b')).toBe(true);
      await holder.unlock();
    });

    itFull(fx)(
      'outside any context each acquisition is its own owner, and lock(name) ... unlock(name) releases it (a script, a cron job, onModuleInit)',
      async () => {
        const client = await fx.client();
        const handle = await client.lock('re:c');
        expect(await client.tryLock('re:c')).toBe(false); // another acquisition outside a context: another owner
        expect(await client.getHoldCount('re:c')).toBe(1); // by name, outside a context: the one that holds it
        expect(await client.isHeldByCurrentContext('re:c')).toBe(true);
        await client.unlock('re:c');
        expect(handle.isHeld).toBe(false);
        expect(await fx.keyExistsAnywhere('lock:{re:c}')).toBe(false);
        expect(client.stats().renewing).toBe(0); // nothing left held and renewed
        // Nothing held outside a context any more: a typed error, not a guess.
        const error = await client.unlock('re:c').catch((e: unknown) => e);
        expect(error).toBeInstanceOf(LockNotHeldError);
        expect((error as LockNotHeldError).code).toBe('LOCK_NOT_HELD');
        await expect(handle.unlock()).rejects.toBeInstanceOf(LockNotHeldError);
      },
    );

    itFull(fx)('outside any context, concurrent workers using lock(name) ... unlock(name) still exclude each other', async () => {
      const client = await fx.client();
      let inside = 0;
      let overlaps = 0;
      const worker = async (): Promise<void> => {
        for (let i = 0; i < 5; i++) {
          await client.lock('re:g', { waitTime: '10s' });
          inside += 1;
          if (inside > 1) overlaps += 1;
          await new Promise((resolve) => setImmediate(resolve));
          inside -= 1;
          await client.unlock('re:g');
        }
      };
      await Promise.all([worker(), worker(), worker()]);
      expect(overlaps).toBe(0);
      expect(await fx.keyExistsAnywhere('lock:{re:g}')).toBe(false);
    });

    itFull(fx)('withLock nests without deadlock and exposes the current lock to the code it runs', async () => {
      const client = await fx.client();
      const tokens = await client.withLock('re:d', async (outer) => {
        expect(client.currentLock()).toBe(outer);
        const inner = await client.withLock('re:d', async (nested) => {
          expect(await client.getHoldCount('re:d')).toBe(2);
          return nested.token;
        });
        expect(await client.getHoldCount('re:d')).toBe(1);
        return [outer.token, inner];
      });
      expect(tokens[0]).toBe(tokens[1]);
      expect(await fx.keyExistsAnywhere('lock:{re:d}')).toBe(false);
    });

    itFull(fx)('a reentrant acquisition with a shorter lease never shortens the lease already held', async () => {
      const client = await fx.client();
      await client.runInNewContext(async () => {
        const outer = await client.lock('re:e', '20s');
        const inner = await client.lock('re:e', 50);
        expect(await client.remainTimeToLive('re:e')).toBeGreaterThan(10_000);
        await inner.unlock();
        await outer.unlock();
      });
    });

    itFull(fx)('two clients (two processes, in effect) never share an owner, even with equal context numbers', async () => {
      const one = await fx.client();
      const two = await fx.client();
      await one.runInNewContext(async () => {
        const handle = await one.lock('re:f');
        expect(await two.tryLock('re:f')).toBe(false);
        expect(await two.getHoldCount('re:f')).toBe(0);
        await handle.unlock();
      });
    });
  });
}
