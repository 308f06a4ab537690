import type { LockClient, LockHandle } from 'nestjs-distributed-lock';
import { MAX_HANDOVER_STREAK } from '../../../libs/distributed-lock/src/core/waiting/lock-line.js';
import { stopAllWorkers, WorkerProcess } from '../../harness/worker-process.js';
import { nextEvent, until } from '../../harness/wait.js';
import { itAcrossProcesses, itFull, type ModeFixture } from '../fixture.js';

/** Resolves once `client` has subscribed to a lock's channel: one of its callers waits. */
const queued = (client: LockClient): Promise<unknown> => nextEvent(client.events, 'subscription', (e: { subscribed: boolean }) => e.subscribed);

/** Fields of the lock hash that mark a process as waiting (`w:<client id>`). */
async function waitingMarks(fx: ModeFixture, name: string): Promise<string[]> {
  return (await fx.hkeys(`lock:{${name}}`)).filter((field) => field.startsWith('w:'));
}

/**
 * How a plain lock passes from one holder to the next: to a caller of the same process in the
 * release itself, and between processes in turns, in the order they started waiting. Each client
 * stands for a process (it has its own client id, as separate processes do). RedLock keeps the
 * plain release-and-retry (its nodes cannot agree on an order), so these tests do not apply to it.
 */
export function handoverSuite(fx: ModeFixture): void {
  if (fx.mode === 'redlock') return;

  describe('hand-over between holders', () => {
    afterEach(stopAllWorkers);

    it('a release hands the lock to the next caller of the same process: new token, its own lease, nothing left behind', async () => {
      const client = await fx.client();
      const holder = await client.runInNewContext(() => client.lock('hand:a', '2s'));
      const next = client.runInNewContext(() => client.lock('hand:a', { leaseTime: '20s', waitTime: '10s' }));
      await queued(client);
      await holder.unlock();
      const handle = await next;
      expect(handle.token).toBeGreaterThan(holder.token);
      expect(await client.remainTimeToLive('hand:a')).toBeGreaterThan(15_000);
      expect(await waitingMarks(fx, 'hand:a')).toEqual([]);
      await handle.unlock();
      expect(await fx.keyExistsAnywhere('lock:{hand:a}')).toBe(false);
      expect(client.stats()).toMatchObject({ held: 0, renewing: 0 });
    });

    it(`processes take turns: one serves at most ${MAX_HANDOVER_STREAK + 1} of its callers in a row while others wait, then they go in the order they came`, async () => {
      const busy = await fx.client();
      const [second, third] = [await fx.client(), await fx.client()];
      const order: string[] = [];
      const LOCAL = 3 * (MAX_HANDOVER_STREAK + 1);
      const holder = await busy.runInNewContext(() => busy.lock('hand:turns', '30s'));
      const locals = Array.from({ length: LOCAL }, () =>
        busy.runInNewContext(() => busy.withLock('hand:turns', async () => void order.push('busy'), { waitTime: '20s' })),
      );
      await until(() => busy.stats().waitingChannels === 1, 'the local callers to queue');
      const others: Promise<void>[] = [];
      for (const [client, tag] of [
        [second, 'second'],
        [third, 'third'],
      ] as const) {
        const waiting = queued(client);
        others.push(client.withLock('hand:turns', async () => void order.push(tag), { waitTime: '20s' }));
        await waiting; // marked as waiting in Redis, in this order
      }
      expect(await waitingMarks(fx, 'hand:turns')).toHaveLength(3);
      await holder.unlock();
      await Promise.all([...locals, ...others]);

      // Without turns, the busy process would hand the lock among its own callers until all were done.
      const secondAt = order.indexOf('second');
      expect(secondAt).toBeGreaterThanOrEqual(0);
      expect(secondAt).toBeLessThanOrEqual(MAX_HANDOVER_STREAK + 1);
      expect(order[secondAt + 1]).toBe('third');
      expect(order.filter((tag) => tag === 'busy')).toHaveLength(LOCAL);
      expect(await fx.keyExistsAnywhere('lock:{hand:turns}')).toBe(false);
    });

    itFull(fx)('a process whose callers gave up is no longer marked as waiting, so the lock does not go to it', async () => {
      const holderClient = await fx.client();
      const quitter = await fx.client();
      const stayer = await fx.client();
      const holder = await holderClient.lock('hand:quit', '30s');
      expect(await quitter.tryLock('hand:quit', 150)).toBe(false);
      await until(async () => (await waitingMarks(fx, 'hand:quit')).length === 0, "the quitter's mark to go");
      const waiting = queued(stayer);
      const next = stayer.lock('hand:quit', { waitTime: '10s' });
      await waiting;
      expect(await waitingMarks(fx, 'hand:quit')).toHaveLength(1);
      await holder.unlock();
      const handle: LockHandle = await next;
      expect(handle.token).toBeGreaterThan(holder.token);
      await handle.unlock();
    });

    itFull(fx)('a caller aborted during its first attempt (which marked its process as waiting) unmarks it', async () => {
      const holderClient = await fx.client();
      const aborted = await fx.client();
      const holder = await holderClient.lock('hand:abort', '30s');
      const controller = new AbortController();
      const attempt = aborted.lock('hand:abort', { signal: controller.signal });
      controller.abort(); // the attempt is already on its way to Redis, and fails there (marking)
      await expect(attempt).rejects.toMatchObject({ code: 'LOCK_ACQUIRE_ABORTED' });
      // The rejection comes at once, before the attempt has run in Redis; the withdrawal follows it in
      // the background. close() waits for that work (and removes no mark itself).
      await aborted.close();
      expect(await waitingMarks(fx, 'hand:abort')).toEqual([]);
      await holder.unlock();
      expect(await fx.keyExistsAnywhere('lock:{hand:abort}')).toBe(false); // not granted to the process that gave up
    });

    itAcrossProcesses(fx)('a grant to a process that died while waiting expires: the next process gets the lock, no deadlock', async () => {
      const holderClient = await fx.client();
      const survivor = await fx.client();
      const holder = await holderClient.lock('hand:dead', '30s');
      const doomed = WorkerProcess.start('waiter-worker.mjs', { ...fx.env(), LOCK_NAME: 'hand:dead' });
      await doomed.waitForType('ready');
      doomed.send('wait');
      await doomed.waitForType('queued'); // marked first
      const waiting = queued(survivor);
      const next = survivor.lock('hand:dead', { waitTime: '15s' });
      await waiting;
      doomed.signal('SIGKILL');
      await doomed.exited;
      await holder.unlock();
      // The release granted the lock to the dead process's waiting caller (that process waited longest)...
      const [granted] = await fx.hget('lock:{hand:dead}', 'granted');
      expect(granted).toBe('1');
      // ...and the grant's short lease lets the survivor in (it looks again when the grant would expire).
      const handle = await next;
      expect(handle.token).toBeGreaterThan(holder.token + 1);
      await handle.unlock();
    });
  });
}
