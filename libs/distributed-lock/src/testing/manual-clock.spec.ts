import { LockClient } from '../core/lock-client.js';
import { InMemoryLockStore } from '../memory/in-memory-lock-store.js';
import { ManualClock } from './manual-clock.js';

/**
 * The whole library on one clock that moves only when told to: leases, waits, renewals and key expiry
 * all run in its time (a timer the library set outside the clock port would never fire here, or fire
 * in real time, and these tests would fail or hang).
 */
describe('ManualClock: the library in virtual time', () => {
  let clock: ManualClock;
  let locks: LockClient;

  beforeEach(async () => {
    clock = new ManualClock();
    locks = await LockClient.connect({ client: new InMemoryLockStore({ clock }), clock });
  });
  afterEach(async () => {
    const closing = locks.close();
    await clock.advance(10_000);
    await closing;
  });

  it('a lease runs out when the clock passes it: here a little before Redis (the clock margin), there at its end', async () => {
    const handle = await locks.lock('job', '10s');
    await clock.advance(9_980);
    expect(handle.isHeld).toBe(true);
    await clock.advance(10); // 9 990: past the local deadline (10 s less 1 ms, less 0.1 %)
    expect(handle.isHeld).toBe(false);
    expect(handle.signal.aborted).toBe(true);
    expect(await locks.remainTimeToLive('job')).toBeLessThanOrEqual(10); // freed in Redis once lost here, or about to expire
  });

  it('the watchdog renews a lease without leaseTime for as long as it is held', async () => {
    const handle = await locks.lock('job'); // watchdog: 30 s, renewed every 10 s
    await clock.advance(5 * 60_000);
    expect(handle.isHeld).toBe(true);
    expect(await locks.remainTimeToLive('job')).toBeGreaterThan(20_000);
    await handle.unlock();
  });

  it('a waiter gets the lock when the holder lets go, and a bounded wait ends at its deadline', async () => {
    const holder = await locks.lock('job', '1m');
    const other = await locks.runInNewContext(() => locks.lock('other-job', '1h'));
    const waiting = locks.runInNewContext(() => locks.tryLock('job', { waitTime: '30s' }));
    const late = locks.runInNewContext(() => locks.tryLock('other-job', { waitTime: '2s' }));
    await clock.advance(2_000);
    expect(await late).toBe(false);
    await clock.advance(10_000);
    await holder.unlock();
    await clock.settle();
    const handle = await waiting;
    expect(handle && handle.isHeld).toBe(true);
    expect(handle && handle.token).toBeGreaterThan(holder.token);
    await other.unlock();
  });
});
