import { setTimeout as sleep } from 'node:timers/promises';
import { LockNotHeldError, UnsupportedLockOperationError, type LockClient, type LockHandle } from 'nestjs-distributed-lock';
import { stopAllWorkers, WorkerProcess } from '../../harness/worker-process.js';
import { nextEvent, until } from '../../harness/wait.js';
import { itAcrossProcesses, itFull, type ModeFixture } from '../fixture.js';

/** Runs `fn` in a new lock context of `client`: a separate owner. */
const as = <T>(client: LockClient, fn: () => Promise<T>): Promise<T> => client.runInNewContext(fn);

/** A promise with its resolver, for barriers. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

export function lockFamilySuite(fx: ModeFixture): void {
  describe('lock family', () => {
    if (fx.mode === 'redlock') {
      it('fair and read-write locks are refused in redlock mode with a typed error, before any Redis call', async () => {
        const client = await fx.client();
        expect(() => client.getFairLock('family:x')).toThrow(UnsupportedLockOperationError);
        expect(() => client.getReadWriteLock('family:x')).toThrow(expect.objectContaining({ code: 'LOCK_UNSUPPORTED' }));
      });
    } else {
      fairLockSuite(fx);
      readWriteLockSuite(fx);
    }
    multiLockSuite(fx);
  });
}

function fairLockSuite(fx: ModeFixture): void {
  describe('fair lock', () => {
    afterEach(stopAllWorkers);

    itFull(fx)('is reentrant with one token, and each new holder gets a higher one', async () => {
      const client = await fx.client();
      const lock = client.getFairLock('fair:reentry');
      await as(client, async () => {
        const outer = await lock.lock();
        const inner = await lock.lock();
        expect(inner.token).toBe(outer.token);
        expect(await lock.getHoldCount()).toBe(2);
        await inner.unlock();
        await outer.unlock();
        expect(await lock.isLocked()).toBe(false);
        const next = await lock.lock();
        expect(next.token).toBeGreaterThan(outer.token);
        await next.unlock();
      });
    });

    it("is woken by the release, not by the holder's lease running out", async () => {
      const client = await fx.client();
      const lock = client.getFairLock('fair:wake');
      const holder = await lock.lock('60s');
      const waiting = lock.lock({ waitTime: '20s' });
      await until(async () => (await lock.queueLength()) === 1, 'the waiter to queue');
      const waited = nextEvent<[{ name: string; kind: string; waitedMs: number }]>(client.events, 'waited');
      await holder.unlock();
      const handle = await waiting; // with a 60 s lease and no wake-up, this would time out
      expect(handle.token).toBeGreaterThan(holder.token);
      const [event] = await waited;
      expect(event).toMatchObject({ name: 'fair:wake', kind: 'fair' });
      expect(event.waitedMs).toBeGreaterThan(0);
      await handle.unlock();
    });

    itAcrossProcesses(fx)('grants in arrival order across processes', async () => {
      const holderClient = await fx.client();
      const lock = holderClient.getFairLock('fair:order');
      const logKey = 'fair:order:log';
      const holder = await lock.lock();
      const env = { ...fx.env(), LOCK_NAME: 'fair:order', QUEUE_TIMEOUT: 5000, LOG_KEY: logKey };
      const workers = [WorkerProcess.start('fair-worker.mjs', env), WorkerProcess.start('fair-worker.mjs', env)];
      await Promise.all(workers.map((worker) => worker.waitForType('ready')));
      // Interleave arrivals between the two processes: a1 b1 a2 b2, then one in this process.
      const arrivals: [WorkerProcess | undefined, string][] = [
        [workers[0], 'a1'],
        [workers[1], 'b1'],
        [workers[0], 'a2'],
        [workers[1], 'b2'],
        [undefined, 't5'],
      ];
      let local: Promise<void> | undefined;
      for (const [index, [worker, tag]] of arrivals.entries()) {
        if (worker) worker.send(`acquire ${tag}`);
        else local = as(holderClient, () => lock.withLock(async () => void (await fx.data(holderClient).rpush(logKey, tag))));
        await until(async () => (await lock.queueLength()) === index + 1, `${tag} to queue`);
      }
      await holder.unlock();
      await local;
      await until(async () => (await fx.data(holderClient).llen(logKey)) === arrivals.length, 'every waiter to get the lock');
      expect(await fx.data(holderClient).lrange(logKey, 0, -1)).toEqual(arrivals.map(([, tag]) => tag));
      expect(await lock.queueLength()).toBe(0);
      for (const worker of workers) worker.send('exit');
    });

    itAcrossProcesses(fx)('a queued waiter whose process is killed blocks the queue for at most its queue timeout', async () => {
      const client = await fx.client();
      const lock = client.getFairLock('fair:dead', { queueTimeout: 900 });
      const holder = await lock.lock();
      const env = { ...fx.env(), LOCK_NAME: 'fair:dead', QUEUE_TIMEOUT: 900, LOG_KEY: 'fair:dead:log' };
      const doomed = WorkerProcess.start('fair-worker.mjs', env);
      await doomed.waitForType('ready');
      doomed.send('acquire doomed');
      await until(async () => (await lock.queueLength()) === 1, 'the doomed waiter to queue');
      const behind = as(client, () => lock.lock({ waitTime: '15s' }));
      await until(async () => (await lock.queueLength()) === 2, 'the second waiter to queue');
      doomed.signal('SIGKILL');
      await doomed.exited;
      await holder.unlock();
      // The dead waiter is first in the queue and never refreshes its entry: once it expires, the next
      // lock call drops it and the live waiter gets the lock (without that, it would time out).
      const handle = await behind;
      expect(handle.token).toBeGreaterThan(holder.token);
      expect(await fx.data(client).llen('fair:dead:log')).toBe(0);
      await handle.unlock();
      expect(await lock.queueLength()).toBe(0);
    });

    itFull(fx)('a waiter that becomes first in its process keeps its place in the queue while the one before it holds the lock', async () => {
      // Renewals every 800 ms; places expire after 400 ms without a refresh (refreshed every 133 ms: a
      // loaded machine stalling an event loop for 150 ms, as CI's did, must not expire a live place).
      const [a, b, holderClient] = [await fx.client({ watchdogTimeout: 2400 }), await fx.client(), await fx.client()];
      const lock = (client: LockClient) => client.getFairLock('fair:promoted', { queueTimeout: 400 });
      const holder = await lock(holderClient).lock('60s');
      const order: string[] = [];
      const firstHolds = deferred();
      const firstMayGo = deferred();
      const take = (client: LockClient, tag: string, body: () => Promise<void> = async () => undefined) =>
        as(client, () => lock(client).withLock(async () => void (order.push(tag), await body())));
      const queued = (n: number) => until(async () => (await lock(holderClient).queueLength()) === n, `${n} waiters to queue`);
      const a1 = take(a, 'a1', async () => {
        firstHolds.resolve();
        await firstMayGo.promise;
      });
      await queued(1);
      const a2 = take(a, 'a2');
      await queued(2);
      const b1 = take(b, 'b1');
      await queued(3);
      await holder.unlock();
      await firstHolds.promise;
      // a1 holds for two renewals, far longer than a place lives without a refresh: a2 must keep refreshing its own.
      await nextEvent(a.events, 'renewed');
      await nextEvent(a.events, 'renewed');
      firstMayGo.resolve();
      await Promise.all([a1, a2, b1]);
      expect(order).toEqual(['a1', 'a2', 'b1']);
    });

    itFull(fx)('a waiter that gives up leaves the queue, and tryLock without wait never queues', async () => {
      const client = await fx.client();
      const lock = client.getFairLock('fair:give-up');
      const holder = await lock.lock();
      expect(await as(client, () => lock.tryLock())).toBe(false);
      expect(await lock.queueLength()).toBe(0);
      expect(await as(client, () => lock.tryLock('150ms'))).toBe(false);
      expect(await lock.queueLength()).toBe(0);
      const abort = new AbortController();
      const waiting = as(client, () => lock.lock({ signal: abort.signal }));
      await until(async () => (await lock.queueLength()) === 1, 'the waiter to queue');
      abort.abort();
      await expect(waiting).rejects.toMatchObject({ code: 'LOCK_ACQUIRE_ABORTED' });
      expect(await lock.queueLength()).toBe(0);
      await holder.unlock();
      // The subscription of the waiter that gave up is dropped in the background.
      await until(() => client.stats().waitingChannels === 0, 'the unsubscription');
      expect(client.stats()).toEqual({ held: 0, renewing: 0, waitingChannels: 0 });
    });

    itFull(fx)('excludes concurrent owners: read-modify-write loses no update', async () => {
      const [a, b] = [await fx.client(), await fx.client()];
      const key = 'fair:counter';
      const work = (client: LockClient) =>
        Promise.all(
          Array.from({ length: 4 }, () =>
            as(client, async () => {
              for (let i = 0; i < 5; i++) {
                await client.getFairLock('fair:counter-lock').withLock(async () => {
                  const value = Number((await fx.data(client).get(key)) ?? 0);
                  await sleep(1);
                  await fx.data(client).set(key, value + 1);
                });
              }
            }),
          ),
        );
      await Promise.all([work(a), work(b)]);
      expect(Number(await fx.data(a).get(key))).toBe(40);
    });
  });
}

function readWriteLockSuite(fx: ModeFixture): void {
  describe('read-write lock', () => {
    it('readers share it, a writer waits for them, readers wait for the writer; tokens keep rising', async () => {
      const client = await fx.client();
      const rw = client.getReadWriteLock('rw:basic');
      const r1 = await as(client, () => rw.readLock().lock());
      const r2 = await as(client, () => rw.readLock().lock());
      expect(r2.token).toBeGreaterThan(r1.token);
      expect(await rw.readLock().isLocked()).toBe(true);
      expect(await as(client, () => rw.writeLock().tryLock())).toBe(false);
      await r1.unlock();
      expect(await as(client, () => rw.writeLock().tryLock())).toBe(false);
      await r2.unlock();
      const w = await as(client, async () => (await rw.writeLock().tryLock()) as LockHandle);
      expect(w).toBeTruthy();
      expect(w.token).toBeGreaterThan(r2.token);
      expect(await rw.writeLock().isLocked()).toBe(true);
      expect(await as(client, () => rw.readLock().tryLock())).toBe(false);
      expect(await as(client, () => rw.writeLock().tryLock())).toBe(false);
      await w.unlock();
      expect(await fx.keyExistsAnywhere('lock:{rw:basic}:rw')).toBe(false);
    });

    itFull(fx)('outside any context, unlock by name releases the one holder; with two readers the name is ambiguous: a typed error', async () => {
      const client = await fx.client();
      const rw = client.getReadWriteLock('rw:outside');
      const w = await rw.writeLock().lock();
      expect(await rw.writeLock().getHoldCount()).toBe(1);
      await rw.writeLock().unlock();
      expect(w.isHeld).toBe(false);
      const r1 = await rw.readLock().lock();
      const r2 = await rw.readLock().lock();
      const error = await rw
        .readLock()
        .unlock()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockNotHeldError);
      expect((error as LockNotHeldError).message).toMatch(/2 acquisitions made outside a lock context hold it/);
      expect([r1.isHeld, r2.isHeld]).toEqual([true, true]);
      await r1.unlock();
      await rw.readLock().unlock(); // now only r2 holds it outside a context
      expect(r2.isHeld).toBe(false);
      expect(await fx.keyExistsAnywhere('lock:{rw:outside}:rw')).toBe(false);
    });

    itFull(fx)('is reentrant on both sides; the writer may read (downgrade) but a reader may not write (upgrade)', async () => {
      const client = await fx.client();
      const rw = client.getReadWriteLock('rw:reentry');
      await as(client, async () => {
        const w1 = await rw.writeLock().lock();
        const w2 = await rw.writeLock().lock();
        expect(w2.token).toBe(w1.token);
        expect(await rw.writeLock().getHoldCount()).toBe(2);
        const r = await rw.readLock().lock(); // downgrade path: the writer reads too
        await w2.unlock();
        await w1.unlock();
        expect(await rw.writeLock().getHoldCount()).toBe(0);
        expect(await rw.readLock().getHoldCount()).toBe(1);
        // Now only a read lock is held: another reader gets in, a writer does not.
        const other = await as(client, async () => (await rw.readLock().tryLock()) as LockHandle);
        expect(other).toBeTruthy();
        expect(await as(client, () => rw.writeLock().tryLock())).toBe(false);
        await other.unlock();
        await expect(rw.writeLock().lock({ waitTime: '1s' })).rejects.toBeInstanceOf(UnsupportedLockOperationError);
        await r.unlock();
      });
      expect(client.stats().held).toBe(0);
    });

    it('readers waiting behind a writer are woken together and hold it at the same time', async () => {
      const client = await fx.client();
      const rw = client.getReadWriteLock('rw:together');
      const writer = await as(client, () => rw.writeLock().lock('60s'));
      const all = deferred();
      let holding = 0;
      const readers = Array.from({ length: 3 }, () =>
        as(client, () =>
          rw.readLock().withLock(
            async () => {
              if (++holding === 3) all.resolve();
              await all.promise; // only resolves if all three hold the read lock at once
            },
            { waitTime: '20s' },
          ),
        ),
      );
      await until(() => client.stats().waitingChannels === 1, 'the readers to wait');
      await writer.unlock();
      await Promise.all(readers);
      expect(holding).toBe(3);
    });

    describe('read-sleep-write checker: writers increment, readers check the value does not move under them', () => {
      async function run(useLock: boolean, name: string): Promise<{ count: number; torn: number }> {
        const clients = [await fx.client(), await fx.client()];
        const counter = `${name}:value`;
        let torn = 0;
        const section = async (client: LockClient, kind: 'read' | 'write', body: () => Promise<void>): Promise<void> => {
          if (!useLock) return body();
          const rw = client.getReadWriteLock(name);
          await (kind === 'read' ? rw.readLock() : rw.writeLock()).withLock(body);
        };
        await Promise.all(
          clients.flatMap((client) => [
            ...Array.from({ length: 3 }, () =>
              as(client, async () => {
                for (let i = 0; i < 5; i++) {
                  await section(client, 'write', async () => {
                    const value = Number((await fx.data(client).get(counter)) ?? 0);
                    await sleep(1);
                    await fx.data(client).set(counter, value + 1);
                  });
                }
              }),
            ),
            ...Array.from({ length: 3 }, () =>
              as(client, async () => {
                for (let i = 0; i < 5; i++) {
                  await section(client, 'read', async () => {
                    const before = await fx.data(client).get(counter);
                    await sleep(1);
                    if ((await fx.data(client).get(counter)) !== before) torn++;
                  });
                }
              }),
            ),
          ]),
        );
        return { count: Number(await fx.data(clients[0]!).get(counter)), torn };
      }

      itFull(fx)('control: without the lock, writes are lost or reads are torn', async () => {
        const { count, torn } = await run(false, 'rw:control');
        expect(count < 30 || torn > 0).toBe(true);
      });

      itFull(fx)('with the read-write lock: no lost write, no torn read', async () => {
        expect(await run(true, 'rw:checked')).toEqual({ count: 30, torn: 0 });
      });
    });

    itFull(fx)('the watchdog keeps both sides alive without leaseTime', async () => {
      const client = await fx.client({ watchdogTimeout: 1200 });
      const rw = client.getReadWriteLock('rw:dog');
      const renewed = { read: 0, write: 0 };
      const enough = deferred();
      client.events.on('renewed', ({ kind }) => {
        if (kind === 'read' || kind === 'write') renewed[kind]++;
        if (renewed.read >= 4 && renewed.write >= 4) enough.resolve();
      });
      await as(client, async () => {
        const w = await rw.writeLock().lock();
        const r = await rw.readLock().lock();
        await enough.promise; // four renewals each: past the 1.2 s watchdog timeout
        expect(w.isHeld && r.isHeld).toBe(true);
        expect(await rw.writeLock().getHoldCount()).toBe(1);
        expect(await rw.readLock().getHoldCount()).toBe(1);
        await r.unlock();
        await w.unlock();
      });
      expect(client.stats()).toEqual({ held: 0, renewing: 0, waitingChannels: 0 });
    });
  });
}

function multiLockSuite(fx: ModeFixture): void {
  describe('multi-lock', () => {
    itFull(fx)('takes all or nothing: a busy member means none is taken, and a partial take is undone', async () => {
      const client = await fx.client();
      const names = ['multi:c', 'multi:a', 'multi:b'];
      if (fx.mode === 'cluster') {
        // The names hash to different slots, so the members live on different masters.
        const admin = fx.topology().servers[0]!.client();
        const slots = await Promise.all(names.map((name) => admin.call('CLUSTER', 'KEYSLOT', `lock:{${name}}`)));
        expect(new Set(slots).size).toBeGreaterThan(1);
      }
      const blocker = await client.lock('multi:b');
      const multi = client.getMultiLock(names);
      expect(multi.locks.map((lock) => lock.name)).toEqual(['multi:a', 'multi:b', 'multi:c']);
      expect(await as(client, () => multi.tryLock())).toBe(false);
      expect(await as(client, () => multi.tryLock('150ms'))).toBe(false);
      expect(await client.isLocked('multi:a')).toBe(false);
      expect(await client.isLocked('multi:c')).toBe(false);
      const waiting = as(client, () => multi.lock({ waitTime: '10s' }));
      await blocker.unlock();
      const handle = await waiting;
      expect(Object.keys(handle.tokens).sort()).toEqual(['multi:a', 'multi:b', 'multi:c']);
      expect(handle.tokens['multi:b']).toBeGreaterThan(blocker.token);
      for (const name of names) expect(await client.isLocked(name)).toBe(true);
      await handle.unlock();
      for (const name of names) expect(await client.isLocked(name)).toBe(false);
      expect(client.stats()).toEqual({ held: 0, renewing: 0, waitingChannels: 0 });
    });

    describe('overlapping name sets under contention', () => {
      const SETS = [
        ['ov:x', 'ov:y'],
        ['ov:y', 'ov:z'],
        ['ov:z', 'ov:x'],
        ['ov:y', 'ov:x'],
        ['ov:x', 'ov:y', 'ov:z'],
      ];

      async function run(useLock: boolean): Promise<number> {
        const clients = [await fx.client(), await fx.client()];
        const inUse = new Set<string>();
        let overlaps = 0;
        const body = async (names: string[]): Promise<void> => {
          for (const name of names) {
            if (inUse.has(name)) overlaps++;
            inUse.add(name);
          }
          await sleep(1);
          for (const name of names) inUse.delete(name);
        };
        await Promise.all(
          clients.flatMap((client) =>
            SETS.map((names) =>
              as(client, async () => {
                for (let i = 0; i < 6; i++) {
                  if (useLock) await client.getMultiLock(names).withLock(() => body(names));
                  else await body(names);
                }
              }),
            ),
          ),
        );
        return overlaps;
      }

      itFull(fx)('control: without the lock, sections over shared names overlap', async () => {
        expect(await run(false)).toBeGreaterThan(0);
      });

      itFull(fx)('with multi-locks given in clashing orders: no overlap and no deadlock', async () => {
        expect(await run(true)).toBe(0);
      });
    });
  });
}
