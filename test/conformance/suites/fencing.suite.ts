import { runInNewLockContext } from 'nestjs-distributed-lock';
import type { ModeFixture } from '../fixture.js';

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

    it('a reentrant acquisition returns the token of the hold it joins', async () => {
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
  });
}
