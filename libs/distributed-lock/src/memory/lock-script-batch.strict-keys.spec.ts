import { jest } from '@jest/globals';
import { LockNode } from '../core/connection/lock-node.js';
import { reentrantAcquire } from '../core/locks/reentrant/reentrant-acquire.script.js';
import { LOCK_SCRIPT_BATCH } from '../core/lock-scripts.js';
import { IoredisPort } from '../core/redis/ioredis.port.js';
import { LockKeys } from '../core/scripts/lock-keys.js';
import { systemClock } from '../core/util/clock.js';
import { InMemoryLockStore } from './in-memory-lock-store.js';
import type { StrictKeys } from './strict-keys.js';

/**
 * The batch script (group commit) under strict keys. The conformance suite's strict runs cannot show
 * it: the in-memory store's port turns group commit off (a batch waits for the end of the turn,
 * which Jest's fake timers in users' tests would hold back). Here a LockNode batches on the store.
 */
describe('the batch script under strict keys', () => {
  const NAMES = ['a', 'b', 'c', 'd', 'e', 'f'];

  /** Acquisitions of every name by 3 owners, issued in one turn; returns the store's batch runs and what it refused. */
  async function acquireTogether(strictKeys: StrictKeys, oneSlotPerScript: boolean) {
    const store = new InMemoryLockStore({ strictKeys });
    const evalsha = jest.spyOn(store, 'evalsha');
    // The store's own port turns group commit off; this one keeps it on, to batch on the store.
    const node = new LockNode(new IoredisPort(store), { target: 'memory', timeoutMs: 5000, batch: LOCK_SCRIPT_BATCH, oneSlotPerScript, clock: systemClock });
    const keys = new LockKeys('lock:', oneSlotPerScript);
    await store.time(); // (the node reads the server clock before its first guarded script)
    const calls = NAMES.flatMap((name) =>
      ['o1', 'o2', 'o3'].map((owner) =>
        node.run(reentrantAcquire, {
          lock: keys.lock(name),
          fence: keys.fence(name),
          owner,
          leaseMs: 10_000,
          waitingClient: '',
          queue: 'not-queued',
          watchdog: false,
          firstIfFailed: '',
          firstIfAcquired: '',
        }),
      ),
    );
    const settled = await Promise.allSettled(calls);
    const batches = evalsha.mock.calls.filter(([sha]) => sha === LOCK_SCRIPT_BATCH.sha).length;
    return { settled, batches, refused: store.keyspace.scriptKeyViolations };
  }

  it("'declared': a batch of mixed names declares every key its operations touch", async () => {
    const { settled, batches, refused } = await acquireTogether('declared', false);
    expect(batches).toBeGreaterThan(0); // the batch script really ran
    expect(refused).toEqual([]);
    expect(settled.every((outcome) => outcome.status === 'fulfilled')).toBe(true);
  });

  it("'one-slot' with oneSlotPerScript: each batch carries one name's operations, keys in one slot", async () => {
    const { settled, batches, refused } = await acquireTogether('one-slot', true);
    expect(batches).toBeGreaterThan(0);
    expect(refused).toEqual([]);
    expect(settled.every((outcome) => outcome.status === 'fulfilled')).toBe(true);
  });

  it("control: 'one-slot' without oneSlotPerScript refuses the mixed batch (and the lone acquire, its fence in another slot)", async () => {
    const { settled, refused } = await acquireTogether('one-slot', false);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((error) => error.reason === 'cross-slot')).toBe(true);
    expect(settled.some((outcome) => outcome.status === 'rejected')).toBe(true);
  });
});
