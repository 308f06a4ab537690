import { systemClock, type Clock, type LockHandle } from 'nestjs-distributed-lock';
import { WAITER_RECHECK_MS } from '../../../libs/distributed-lock/src/core/waiting/subscriptions.js';
import { stopAllWorkers, WorkerProcess } from '../../harness/worker-process.js';
import { nextEvent, until } from '../../harness/wait.js';
import { reentrantAcquire } from '../../../libs/distributed-lock/src/core/locks/reentrant/reentrant-acquire.script.js';
import { countScriptRuns, itAcrossProcesses, type ModeFixture } from '../fixture.js';

export function wakeUpSuite(fx: ModeFixture): void {
  describe('waiting is woken by the release, not by polling', () => {
    afterEach(stopAllWorkers);

    it('a waiter gets the lock right after the release although the lease had 30 s left', async () => {
      const client = await fx.client();
      const holder = await client.lock('wake:a'); // watchdog lease: 30 s
      const waiting = client.tryLock('wake:a', '5s');
      await nextEvent(client.events, 'subscription', (e: { subscribed: boolean }) => e.subscribed);
      expect(await client.remainTimeToLive('wake:a')).toBeGreaterThan(25_000);
      await holder.unlock();
      // Polling at the lease would take 30 s; the 5 s wait can only succeed through the notification.
      const handle = await waiting;
      expect(handle).not.toBe(false);
      if (handle) await handle.unlock();
    });

    itAcrossProcesses(fx)('a release in another process wakes the waiter here', async () => {
      const client = await fx.client();
      const worker = WorkerProcess.start('holder-worker.mjs', { ...fx.env(), LOCK_NAME: 'wake:b', LEASE: 'watchdog' });
      const acquired = await worker.waitForType('acquired');
      const waiting = client.tryLock('wake:b', '5s');
      await nextEvent(client.events, 'subscription', (e: { subscribed: boolean }) => e.subscribed);
      worker.send('unlock');
      await worker.waitForType('unlocked');
      const handle = await waiting;
      expect(handle).not.toBe(false);
      if (handle) {
        expect(handle.token).toBeGreaterThan(acquired.token as number);
        await handle.unlock();
      }
      worker.send('exit');
      expect((await worker.exited).code).toBe(0);
    });

    it('one release serves one local waiter: a hand-over costs one script (release and grant in one), not one attempt per waiter', async () => {
      // Node's clock, but for the waiters' periodic re-check (the safety net for a lost message): one
      // attempt every WAITER_RECHECK_MS, which on a slow run fell into a round and counted there.
      const withoutRecheck: Clock = { ...systemClock, setTimer: (ms, fn) => (ms === WAITER_RECHECK_MS ? () => undefined : systemClock.setTimer(ms, fn)) };
      const client = await fx.client({ clock: withoutRecheck });
      const WAITERS = 5;
      // Load the scripts into the lock node(s), so that a first EVALSHA answered with NOSCRIPT (and
      // resent as EVAL) does not count as an extra script run below.
      await fx.loadScripts(client);
      // Acquire attempts counted as the client issues them: the waiters' first attempts leave in one
      // batch (one script call on the server), which the server's command stats would count once.
      const attempts = countScriptRuns(reentrantAcquire);
      const granted: LockHandle[] = [];
      let holder: LockHandle;
      let waiters: Promise<LockHandle>[];
      try {
        holder = await client.lock('wake:c', '30s');
        waiters = Array.from({ length: WAITERS }, () =>
          client.lock('wake:c', { leaseTime: '30s', waitTime: '10s' }).then((handle) => {
            granted.push(handle);
            return handle;
          }),
        );
        // The holder's attempt, every waiter's first attempt, and the first waiter's retry once
        // subscribed: the others stay queued behind it, no attempt of theirs. All answered, so that
        // none of them runs in Redis during the first round.
        const expected = (1 + WAITERS + 1) * fx.scriptsPerAttempt;
        await until(() => attempts.answered >= expected && client.stats().waitingChannels === 1, 'every waiter to queue');
        expect(attempts.count).toBe(expected);
      } finally {
        attempts.restore();
      }

      let previous: LockHandle = holder;
      for (let round = 0; round < WAITERS; round++) {
        await fx.resetStats();
        const next = nextEvent(client.events, 'acquired');
        await previous.unlock();
        await next;
        // The release hands the lock to the first waiter in the same script (RedLock: a release, then
        // the woken waiter's attempt, on every node, plus the token raise). A herd would add an
        // attempt for every other waiter.
        // RedLock answers once a majority has: the last node's scripts may still be on their way.
        await until(async () => (await fx.scriptCalls()) >= fx.scriptsPerHandover, 'the hand-over to run on every node');
        expect(await fx.scriptCalls()).toBe(fx.scriptsPerHandover);
        // The 'acquired' event comes just before the waiter's promise resolves: wait for the handle.
        await until(() => granted.length > round, 'the woken waiter to get its handle');
        previous = granted[round]!;
      }
      await previous.unlock();
      await Promise.all(waiters);
    });
  });
}
