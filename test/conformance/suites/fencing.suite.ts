import { LockKeys } from '../../../libs/distributed-lock/src/core/scripts/lock-keys.js';
import { slotOf } from '../../../libs/distributed-lock/src/core/scripts/slot-tags.js';
import { itFull, type ModeFixture } from '../fixture.js';

/** `count` lock names whose keys live in one cluster slot, starting with `name`. */
function sameSlot(name: string, count: number): string[] {
  const names = [name];
  for (let i = 0; names.length < count; i++) if (slotOf(`${name}:${i}`) === slotOf(name)) names.push(`${name}:${i}`);
  return names;
}

export function fencingSuite(fx: ModeFixture): void {
  /** The key names of the suites' clients (the default prefix). */
  const keys = new LockKeys('lock:', fx.mode === 'cluster' || fx.oneSlotPerScript);
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
      await client.runInNewContext(async () => {
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
      expect(await fx.keyExistsEverywhere(keys.fence('fence:c'))).toBe(true);
    });

    it('the counter is shared by the names of one cluster slot and never expires; a lost one is overtaken by the clock floor', async () => {
      const client = await fx.client();
      // Two names of one slot draw from one counter: a token of either is higher than every earlier one of both.
      const names = sameSlot('fence:e', 2);
      expect(keys.fence(names[0]!)).toBe(keys.fence(names[1]!));
      const first = await client.lock(names[0]!);
      const second = await client.lock(names[1]!);
      expect(second.token).toBeGreaterThan(first.token);
      await first.unlock();
      await second.unlock();
      expect((await fx.pttl(keys.fence(names[0]!))).every((ttl) => ttl === -1)).toBe(true);
      // A counter that was lost (deleted here) is overtaken by the clock floor once the server's clock
      // has moved past the millisecond of the last token (a restart takes seconds). The test's host is
      // the server's: wait for its clock to move on.
      const drawnBy = Date.now();
      while (Date.now() <= drawnBy + 1) await new Promise((resolve) => setImmediate(resolve));
      await fx.del(keys.fence(names[0]!));
      const third = await client.lock(names[0]!);
      expect(third.token).toBeGreaterThan(second.token);
      await third.unlock();
    });

    itFull(fx)('a counter running ahead of the clock floor counts on from where it is', async () => {
      const client = await fx.client();
      const ahead = (Date.now() + 10 * 60_000) * 1000;
      // As if the names of this slot had drawn tokens faster than a thousand per millisecond for a while.
      await fx.set(keys.fence('fence:f'), String(ahead));
      const handle = await client.lock('fence:f');
      expect(handle.token).toBe(ahead + 1);
      await handle.unlock();
    });
  });
}
