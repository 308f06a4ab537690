import { runInNewLockContext } from 'nestjs-distributed-lock';
import { FENCE_COUNTER_TTL_MS } from '../../../libs/distributed-lock/src/core/scripts/next-token.lua.js';
import { itFull, type ModeFixture } from '../fixture.js';

export function fencingSuite(fx: ModeFixture): void {
  describe('fencing tokens', () => {
    it('strictly increase per lock name across clients, lifetimes, expiry and force unlock', async () => {
      const one = await fx.client();
      const two = await fx.client();
      const tokens: number[] = [];
      for (let i = 0; i < 5; i++) {
        const client = i % 2 ? two : one;
        const handle = await client.lock('fence:a');
        tokens.push(handle.token);
        await handle.unlock();
      }
      const expiring = await one.lock('fence:a', 30);
      tokens.push(expiring.token);
      const afterExpiry = await two.lock('fence:a', { waitTime: '5s' });
      tokens.push(afterExpiry.token);
      await one.forceUnlock('fence:a');
      const afterForce = await one.lock('fence:a');
      tokens.push(afterForce.token);
      await afterForce.unlock();

      for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]!);
    });

    itFull(fx)('a reentrant acquisition returns the token of the hold it joins', async () => {
      const client = await fx.client();
      await runInNewLockContext(async () => {
        const outer = await client.lock('fence:b');
        const inner = await client.lock('fence:b');
        expect(inner.token).toBe(outer.token);
        await inner.unlock();
        await outer.unlock();
      });
    });

    it('a new counter starts from the server clock (ms x 1000), so a lost one is overtaken, and lives in the lock slot', async () => {
      const client = await fx.client();
      // The test runs on the host of the lock Redis (or the in-memory store): one clock.
      const before = Date.now();
      const a = await client.lock('fence:c');
      const b = await client.lock('fence:d');
      const after = Date.now();
      for (const handle of [a, b]) {
        expect(handle.token).toBeGreaterThan(before * 1000);
        expect(handle.token).toBeLessThanOrEqual((after + 1) * 1000);
        expect(Number.isSafeInteger(handle.token)).toBe(true);
      }
      await a.unlock();
      await b.unlock();
      expect(await fx.keyExistsEverywhere('lock:{fence:c}:fence')).toBe(true);
    });

    it('the counter expires an hour after its last token (names no longer used leave nothing), and the next token is still higher', async () => {
      const client = await fx.client();
      const first = await client.lock('fence:e');
      await first.unlock();
      const ttls = await fx.pttl('lock:{fence:e}:fence');
      for (const ttl of ttls) {
        expect(ttl).toBeGreaterThan(FENCE_COUNTER_TTL_MS - 60_000);
        expect(ttl).toBeLessThanOrEqual(FENCE_COUNTER_TTL_MS + 1_000);
      }
      // A counter that expired (deleted here) is overtaken by the clock floor once the server's clock
      // has moved past the millisecond of the last token (an expiry comes an hour later; a restart
      // takes seconds). The test's host is the server's: wait for its clock to move on.
      const drawnBy = Date.now();
      while (Date.now() <= drawnBy + 1) await new Promise((resolve) => setImmediate(resolve));
      await fx.del('lock:{fence:e}:fence');
      const second = await client.lock('fence:e');
      expect(second.token).toBeGreaterThan(first.token);
      await second.unlock();
      expect((await fx.pttl('lock:{fence:e}:fence')).every((ttl) => ttl > 0)).toBe(true);
    });

    itFull(fx)('a counter running ahead of the clock floor lives longer by that much, so it cannot expire before the floor passes it', async () => {
      const client = await fx.client();
      const aheadMs = 10 * 60_000;
      // As if one name had drawn tokens faster than a thousand per millisecond for a while.
      await fx.set('lock:{fence:f}:fence', String((Date.now() + aheadMs) * 1000));
      const handle = await client.lock('fence:f');
      await handle.unlock();
      for (const ttl of await fx.pttl('lock:{fence:f}:fence')) {
        expect(ttl).toBeGreaterThan(FENCE_COUNTER_TTL_MS + aheadMs - 60_000);
        expect(ttl).toBeLessThanOrEqual(FENCE_COUNTER_TTL_MS + aheadMs + 1_000);
      }
    });
  });
}
