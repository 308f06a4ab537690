import { LockClient } from 'nestjs-distributed-lock';
import { InMemoryLockStore, type StrictKeys } from 'nestjs-distributed-lock/testing';
import { throwIfScriptsRefused } from './fixture.js';

/** Writes its key, then one it builds itself: what Dragonfly and ElastiCache refuse. */
const UNDECLARED = `redis.call('set', KEYS[1], '1') return redis.call('incr', KEYS[1] .. ':count')`;

/**
 * Controls for a conformance run on a strict-keys store: that the store's check is live on that very
 * store (it refuses an undeclared key, and under 'one-slot' the library's own acquire script when the
 * client does not keep one slot per script), and that the fixture's after-each check fails a test
 * whose refused script the library swallowed. Without them, a green strict run could mean no check ran.
 */
export function describeStrictKeysControls(store: InMemoryLockStore): void {
  const mode = store.strictKeys as StrictKeys;
  describe(`strict keys controls (${mode})`, () => {
    const clients: LockClient[] = [];
    afterEach(async () => {
      await Promise.all(clients.splice(0).map((client) => client.close()));
      store.keyspace.scriptKeyViolations.splice(0);
    });

    it('a script touching a key it did not declare is refused, and recorded even when its error is swallowed', async () => {
      await expect(store.eval(UNDECLARED, 1, 'control:{1}')).rejects.toMatchObject({ code: 'LOCK_SCRIPT_KEYS', key: 'control:{1}:count' });
      await store.eval(UNDECLARED, 1, 'control:{2}').catch(() => undefined); // as the library's background work would
      expect(store.keyspace.scriptKeyViolations.map((error) => error.key)).toEqual(['control:{1}:count', 'control:{2}:count']);
      // The fixture's after-each check fails the test on them, and clears them.
      expect(() => throwIfScriptsRefused(store.keyspace)).toThrow(/strict keys refused 2 script run\(s\).*undeclared-key.*INCR on "control:\{1\}:count"/);
      expect(store.keyspace.scriptKeyViolations).toEqual([]);
      expect(() => throwIfScriptsRefused(store.keyspace)).not.toThrow();
      // Control: with strict keys off, the same script runs (Redis and Valkey take it).
      expect(await new InMemoryLockStore().eval(UNDECLARED, 1, 'control:{1}')).toBe(1);
    });

    it('a script declaring keys of two slots is refused under one-slot only', async () => {
      const twoSlots = ['control:{a}', 'control:{b}'];
      const run = store.eval(`return redis.call('mget', KEYS[1])`, 2, ...twoSlots);
      if (mode === 'one-slot') {
        await expect(run).rejects.toMatchObject({ code: 'LOCK_SCRIPT_KEYS', reason: 'cross-slot', key: 'control:{b}' });
        store.keyspace.scriptKeyViolations.splice(0);
      } else {
        // 'declared' allows it (a single Redis does); MGET is not a store command, so this fails otherwise.
        await expect(run).rejects.toThrow(/mget/i);
        expect(store.keyspace.scriptKeyViolations).toEqual([]);
      }
    });

    if (mode === 'one-slot') {
      it("the library's acquire script spans two slots without oneSlotPerScript (its per-prefix fence), and is refused", async () => {
        const lax = await LockClient.connect({ client: store, oneSlotPerScript: false, keyPrefix: 'control:' });
        clients.push(lax);
        await expect(lax.getLock('order').tryLock({ waitTime: 0, leaseTime: 1000 })).rejects.toThrow();
        expect(store.keyspace.scriptKeyViolations[0]).toMatchObject({ reason: 'cross-slot', key: 'control:fence' });
        store.keyspace.scriptKeyViolations.splice(0);
        // With it, the same lock is taken: the fence counter shares the lock's slot.
        const strict = await LockClient.connect({ client: store, oneSlotPerScript: true, keyPrefix: 'control:' });
        clients.push(strict);
        const handle = await strict.getLock('order').tryLock({ waitTime: 0, leaseTime: 1000 });
        if (handle === false) throw new Error('the lock was not taken with oneSlotPerScript');
        await handle.unlock();
        expect(store.keyspace.scriptKeyViolations).toEqual([]);
      });
    }
  });
}
