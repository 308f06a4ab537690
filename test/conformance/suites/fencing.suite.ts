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

    it('counters of different names are independent, and live in the lock slot', async () => {
      const client = await fx.client();
      const a = await client.lock('fence:c');
      const b = await client.lock('fence:d');
      expect(a.token).toBe(1);
      expect(b.token).toBe(1);
      await a.unlock();
      await b.unlock();
      expect(await fx.keyExistsEverywhere('lock:{fence:c}:fence')).toBe(true);
    });
  });
}
