import { LockLostError } from 'nestjs-distributed-lock';
import { stopAllWorkers, WorkerProcess } from '../../harness/worker-process.js';
import { nextEvent, until } from '../../harness/wait.js';
import { itAcrossProcesses, itFull, type ModeFixture } from '../fixture.js';

// Long enough that a CI stall of several hundred ms (2 cores shared with other topologies) cannot cost a
// renewal; short enough for 3x to pass in a few seconds. 600 ms once lost a lease on a loaded CI machine.
const WATCHDOG_MS = 1200;

export function watchdogSuite(fx: ModeFixture): void {
  describe('watchdog and leases', () => {
    afterEach(stopAllWorkers);

    itFull(fx)('keeps a lock without leaseTime alive past 3x the watchdog timeout, and stops on unlock', async () => {
      const client = await fx.client({ watchdogTimeout: WATCHDOG_MS });
      let renewals = 0;
      client.events.on('renewed', () => renewals++);
      const handle = await client.lock('dog:a');
      // One renewal every timeout/3: nine of them span three full watchdog timeouts.
      await new Promise<void>((resolve) => client.events.on('renewed', () => renewals >= 9 && resolve()));
      expect(handle.isHeld).toBe(true);
      expect(handle.signal.aborted).toBe(false);
      // Held with its token on every node, or for RedLock on a majority (a master that answered late
      // refuses the attempt past its deadline, and renewals there find nothing).
      const tokens = await fx.hget('lock:{dog:a}', 'token');
      expect(tokens.filter((token) => token === String(handle.token)).length).toBeGreaterThanOrEqual(Math.floor(tokens.length / 2) + 1);
      expect(await client.remainTimeToLive('dog:a')).toBeGreaterThan(0);
      expect(client.stats().renewing).toBe(1);
      await handle.unlock();
      expect(client.stats()).toEqual({ held: 0, renewing: 0, waitingChannels: 0 });
    });

    it('an explicit leaseTime is not renewed: the lock expires, the signal aborts, an event tells', async () => {
      const client = await fx.client({ watchdogTimeout: WATCHDOG_MS });
      let renewals = 0;
      client.events.on('renewed', () => renewals++);
      const handle = await client.lock('dog:b', 200);
      expect(client.stats().renewing).toBe(0);
      const [event] = await nextEvent(client.events, 'lost');
      expect(event).toMatchObject({ name: 'dog:b', reason: 'lease-expired' });
      expect(handle.signal.aborted).toBe(true);
      expect((handle.signal.reason as LockLostError).code).toBe('LOCK_LOST');
      expect(renewals).toBe(0);
      // Our deadline comes no later than Redis's; the key then goes by its own expiry or our clean-up.
      await until(async () => !(await fx.keyExistsAnywhere('lock:{dog:b}')), 'the expired lock to disappear', 2000);
      expect(client.stats().held).toBe(0);
    });

    itAcrossProcesses(fx)('a killed holder keeps others out until its lease runs out, then not longer', async () => {
      const worker = WorkerProcess.start('holder-worker.mjs', { ...fx.env(), LOCK_NAME: 'dog:c', LEASE: 'watchdog', WATCHDOG: WATCHDOG_MS });
      const acquired = await worker.waitForType('acquired');
      // Alive past the watchdog timeout thanks to renewals in the holder process (the 3x case is the
      // in-process test above; here the point is the kill).
      await worker.waitFor(() => worker.messages.filter((m) => m.type === 'renewed').length >= 4, 'four renewals');
      const observer = await fx.client({ watchdogTimeout: WATCHDOG_MS });
      expect(await observer.isLocked('dog:c')).toBe(true);

      worker.signal('SIGKILL');
      await worker.exited;
      const killedAt = performance.now();
      const ttlAtKill = await observer.remainTimeToLive('dog:c');
      expect(ttlAtKill).toBeGreaterThan(0);

      const handle = await observer.lock('dog:c', { waitTime: '5s' });
      const waited = performance.now() - killedAt;
      // No early entry: the waiter got in only once the dead holder's remaining lease had passed
      // (2 ms allowance for the granularity of Redis expiry and of our clock reads).
      expect(waited).toBeGreaterThanOrEqual(ttlAtKill - 2);
      expect(handle.token).toBeGreaterThan(acquired.token as number);
      await handle.unlock();
    });

    itAcrossProcesses(fx)('a queue of waiters behind a killed holder: the head watches the lease, and each waiter is served in turn', async () => {
      const worker = WorkerProcess.start('holder-worker.mjs', { ...fx.env(), LOCK_NAME: 'dog:d', LEASE: 400 });
      await worker.waitForType('acquired');
      const client = await fx.client();
      const order: number[] = [];
      const waiters = [0, 1, 2].map((i) =>
        client.withLock(
          'dog:d',
          async () => {
            order.push(i);
          },
          { waitTime: '10s', leaseTime: '5s' },
        ),
      );
      worker.signal('SIGKILL');
      await worker.exited;
      // Only the head polls the dead holder's lease; when it takes the lock, the next one watches the
      // new lease, and each release wakes the next: everyone gets in, in arrival order.
      await Promise.all(waiters);
      expect(order).toEqual([0, 1, 2]);
    });
  });
}
