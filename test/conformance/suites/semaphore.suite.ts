import {
  InvalidLockArgumentError,
  LockAcquireAbortedError,
  LockAcquireTimeoutError,
  LockNotHeldError,
  UnsupportedLockOperationError,
  type LockClient,
  type PermitsHandle,
} from 'nestjs-distributed-lock';
import { stopAllWorkers, WorkerProcess } from '../../harness/worker-process.js';
import { nextEvent, until } from '../../harness/wait.js';
import { itAcrossProcesses, itFull, itWorkersOnly, type ModeFixture } from '../fixture.js';

const PROCESSES = 3;
const CONTEXTS = 4;
const ITERATIONS = 8;
const PERMITS = 3;

export function semaphoreSuite(fx: ModeFixture): void {
  describe('semaphore', () => {
    if (fx.mode === 'redlock') {
      it('is refused in redlock mode with a typed error, before any Redis call', async () => {
        const client = await fx.client();
        expect(() => client.getSemaphore('sem:x', { size: 2 })).toThrow(UnsupportedLockOperationError);
        expect(() => client.getSemaphore('sem:x', { size: 2 })).toThrow(/permits counted on independent masters do not add up/);
      });
      return;
    }
    afterEach(stopAllWorkers);

    it('each acquisition is a lease of its own (token, handle, permits), released through its handle; not reentrant', async () => {
      const client = await fx.client();
      const semaphore = client.getSemaphore('sem:basic', { size: 3 });
      const one = await semaphore.acquire();
      const two = await semaphore.acquire(2);
      expect([one.permits, two.permits]).toEqual([1, 2]);
      expect(two.token).toBeGreaterThan(one.token);
      expect(await semaphore.availablePermits()).toBe(0);
      // The same lock context asking again takes more permits (none left), it does not re-enter.
      await client.runInNewContext(async () => {
        const inner = await semaphore.withPermits(1, async (held) => held, { waitTime: 0 }).catch((error: unknown) => error);
        expect(inner).toBeInstanceOf(LockAcquireTimeoutError);
        expect((inner as Error).message).toMatch(/Semaphore "sem:basic" did not have 1 permit free/);
      });
      expect(client.stats()).toMatchObject({ held: 2, renewing: 2 });
      await two.release();
      expect(await semaphore.availablePermits()).toBe(2);
      await expect(two.release()).rejects.toBeInstanceOf(LockNotHeldError);
      const again = (await semaphore.tryAcquire(2)) as PermitsHandle;
      expect(again.token).toBeGreaterThan(two.token);
      await Promise.all([one.unlock(), again.release()]);
      expect(await semaphore.availablePermits()).toBe(3);
      expect(client.stats()).toEqual({ held: 0, renewing: 0, waitingChannels: 0 });
    });

    itFull(fx)('its size is stored at first use and then Redis counts: trySetSize, setSize, resizeBy; a request larger than the size is refused', async () => {
      const client = await fx.client();
      const first = client.getSemaphore('sem:size', { size: 2 });
      expect(await first.getSize()).toBe(2);
      const other = client.getSemaphore('sem:size', { size: 5 }); // the stored size wins
      expect(await other.getSize()).toBe(2);
      expect(await other.trySetSize(5)).toBe(false);
      expect(await client.getSemaphore('sem:size-new', { size: 1 }).trySetSize(4)).toBe(true);
      expect(await client.getSemaphore('sem:size-new', { size: 1 }).getSize()).toBe(4);
      const held = await first.acquire(2);
      expect(await first.resizeBy(1)).toBe(3);
      expect(await first.availablePermits()).toBe(1);
      await first.setSize(1); // below what is held: nobody loses permits, newcomers wait
      expect(await first.availablePermits()).toBe(0);
      expect(held.isHeld).toBe(true);
      await expect(first.resizeBy(-2)).rejects.toBeInstanceOf(InvalidLockArgumentError);
      await expect(first.acquire(2, { waitTime: '1s' })).rejects.toThrow(/2 asked of semaphore "sem:size", whose size is 1/);
      expect(await first.queueLength()).toBe(0);
      await held.release();
      expect(await first.availablePermits()).toBe(1);
      expect(() => client.getSemaphore('sem:size', { size: -1 })).toThrow(InvalidLockArgumentError);
      await expect(first.acquire(0)).rejects.toBeInstanceOf(InvalidLockArgumentError);
    });

    it("a waiter is woken by the release, not by the holder's lease running out", async () => {
      const client = await fx.client();
      const semaphore = client.getSemaphore('sem:wake', { size: 1 });
      const holder = await semaphore.acquire(1, '60s');
      const waiting = semaphore.acquire(1, { waitTime: '20s' });
      await until(async () => (await semaphore.queueLength()) === 1, 'the waiter to queue');
      const waited = nextEvent<[{ name: string; kind: string }]>(client.events, 'waited');
      await holder.release();
      const handle = await waiting; // a 60 s lease: without the wake-up this would time out
      expect((await waited)[0]).toMatchObject({ name: 'sem:wake', kind: 'semaphore' });
      expect(handle.token).toBeGreaterThan(holder.token);
      await handle.release();
    });

    itFull(fx)('serves waiters in arrival order across clients: one asking for several permits is not overtaken by ones asking for one', async () => {
      const [holderClient, a, b, c] = [await fx.client(), await fx.client(), await fx.client(), await fx.client()];
      const semaphore = (client: LockClient) => client.getSemaphore('sem:order', { size: 2 });
      const h1 = await semaphore(holderClient).acquire(1, '60s');
      const h2 = await semaphore(holderClient).acquire(1, '60s');
      const served: string[] = [];
      const tokens: Record<string, number> = {};
      const take = (client: LockClient, tag: string, permits: number): Promise<PermitsHandle> =>
        semaphore(client)
          .acquire(permits, { waitTime: '20s' })
          .then((handle) => {
            served.push(tag);
            tokens[tag] = handle.token;
            return handle;
          });
      const wantsTwo = take(a, 'two', 2);
      await until(async () => (await semaphore(holderClient).queueLength()) === 1, 'the two-permit waiter to queue');
      const ones = [take(b, 'one-b', 1)];
      await until(async () => (await semaphore(holderClient).queueLength()) === 2, 'b to queue');
      ones.push(take(c, 'one-c', 1));
      await until(async () => (await semaphore(holderClient).queueLength()) === 3, 'c to queue');
      await h1.release(); // one permit free: b and c would fit, but the first in line wants two
      await h2.release();
      const two = await wantsTwo;
      expect(served).toEqual(['two']);
      await two.release();
      const handles = await Promise.all(ones);
      // b and c both fit once two's permits are back: their callers may hear of it in either order, but
      // Redis granted them in line order, and the tokens (drawn at each grant) say so.
      expect(served.slice().sort()).toEqual(['one-b', 'one-c', 'two']);
      expect(tokens['one-b']).toBeGreaterThan(tokens.two!);
      expect(tokens['one-c']).toBeGreaterThan(tokens['one-b']!);
      await Promise.all(handles.map((handle) => handle.release()));
      expect(await semaphore(holderClient).queueLength()).toBe(0);
    });

    itFull(fx)('a waiter that gives up (timeout, abort) leaves the line and leaves nothing behind; tryAcquire without a wait never queues', async () => {
      const client = await fx.client();
      const semaphore = client.getSemaphore('sem:gone', { size: 1 });
      const holder = await semaphore.acquire(1, '30s');
      expect(await semaphore.tryAcquire()).toBe(false);
      expect(await semaphore.queueLength()).toBe(0);
      const unsubscribed = nextEvent(client.events, 'subscription', (e: { subscribed: boolean }) => !e.subscribed);
      expect(await semaphore.tryAcquire(1, '150ms')).toBe(false);
      await unsubscribed;
      expect(await semaphore.queueLength()).toBe(0);
      expect(await fx.subscribers(semaphore.channel)).toBe(0);
      const abort = new AbortController();
      const waiting = semaphore.acquire(1, { signal: abort.signal });
      await until(async () => (await semaphore.queueLength()) === 1, 'the waiter to queue');
      abort.abort();
      await expect(waiting).rejects.toBeInstanceOf(LockAcquireAbortedError);
      expect(await semaphore.queueLength()).toBe(0);
      // A waiter behind one that left is not held up by it.
      const behind = semaphore.acquire(1, { waitTime: '10s' });
      await until(async () => (await semaphore.queueLength()) === 1, 'the next waiter to queue');
      await holder.release();
      await (await behind).release();
      await until(() => client.stats().waitingChannels === 0, 'the unsubscription');
      expect(client.stats()).toEqual({ held: 0, renewing: 0, waitingChannels: 0 });
    });

    itFull(fx)("a lease that runs out aborts the holder's signal and gives its permits back", async () => {
      const client = await fx.client();
      const semaphore = client.getSemaphore('sem:lease', { size: 1 });
      const holder = await semaphore.acquire(1, '300ms');
      const lost = nextEvent<[{ kind: string; reason: string }]>(client.events, 'lost');
      const next = await semaphore.acquire(1, { waitTime: '5s' }); // woken when the lease ends
      expect((await lost)[0]).toMatchObject({ kind: 'semaphore', reason: 'lease-expired' });
      expect(holder.isHeld).toBe(false);
      expect(holder.signal.aborted).toBe(true);
      expect(() => holder.throwIfLost()).toThrow(expect.objectContaining({ code: 'LOCK_LOST' }));
      await expect(holder.release()).rejects.toBeInstanceOf(LockNotHeldError);
      expect(next.token).toBeGreaterThan(holder.token);
      await next.release();
    });

    describe(`never more than ${PERMITS} permits in use across ${PROCESSES} processes x ${CONTEXTS} contexts (1 or 2 permits each)`, () => {
      async function maxInUse(protect: 'semaphore' | 'none', name: string): Promise<number> {
        const inUseKey = `${name}:in-use`;
        const workers = Array.from({ length: PROCESSES }, () =>
          WorkerProcess.start('semaphore-worker.mjs', fx.env(), [protect, CONTEXTS, ITERATIONS, name, PERMITS, inUseKey]),
        );
        await Promise.all(workers.map((worker) => worker.waitForType('ready')));
        for (const worker of workers) worker.send('go');
        const done = await Promise.all(workers.map((worker) => worker.waitForType('done', 60_000)));
        expect((await Promise.all(workers.map((worker) => worker.exited))).map((exit) => exit.code)).toEqual(workers.map(() => 0));
        return Math.max(...done.map((message) => message.maxInUse as number));
      }

      itWorkersOnly(fx)('control: without the semaphore the checker sees more in use than there are permits', async () => {
        expect(await maxInUse('none', 'sem:control')).toBeGreaterThan(PERMITS);
      });

      itWorkersOnly(fx)('with the semaphore: never more than its permits, and all of them used', async () => {
        expect(await maxInUse('semaphore', 'sem:checked')).toBe(PERMITS);
        const client = await fx.client();
        expect(await client.getSemaphore('sem:checked', { size: PERMITS }).availablePermits()).toBe(PERMITS);
      });
    });

    itAcrossProcesses(fx)('the permits of a SIGKILLed holder come back when its lease ends, not before', async () => {
      const client = await fx.client();
      const semaphore = client.getSemaphore('sem:killed', { size: 2 });
      const WATCHDOG = 600;
      const worker = WorkerProcess.start('semaphore-holder-worker.mjs', { ...fx.env(), SEMAPHORE: 'sem:killed', PERMITS: 2, TAKE: 2, WATCHDOG });
      const acquired = await worker.waitForType('acquired');
      const renewedBefore = worker.messages.length;
      await worker.waitFor((message) => message.type === 'renewed' && worker.messages.indexOf(message) >= renewedBefore, 'a renewal');
      worker.signal('SIGKILL');
      await worker.exited;
      // Its last renewal started at `startedAt` (this host's wall clock, shared with the worker): the
      // lease it set ends no earlier than WATCHDOG ms after that, and no later than after its last one.
      const renewals = worker.messages.filter((message) => message.type === 'renewed').map((message) => message.startedAt as number);
      const waiter = await semaphore.acquire(1, { waitTime: '10s' });
      const acquiredAt = Date.now();
      expect(acquiredAt - renewals.at(-1)!).toBeGreaterThanOrEqual(WATCHDOG - 2); // whole milliseconds on both clocks
      expect(acquiredAt - renewals.at(-1)!).toBeLessThan(WATCHDOG + 2000);
      expect(waiter.token).toBeGreaterThan(acquired.token as number);
      expect(await semaphore.availablePermits()).toBe(1); // both of the dead holder's permits came back
      await waiter.release();
    });
  });
}
