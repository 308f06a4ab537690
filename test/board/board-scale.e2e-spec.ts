import type { INestApplication } from '@nestjs/common';
import type { LockClient, LockHandle } from 'nestjs-distributed-lock';
import type { BoardSnapshot } from 'nestjs-distributed-lock/board';
import { useRedis } from '../harness/use-redis.js';
import { until } from '../harness/wait.js';
import { startBoardApp } from './board-app.js';

const LOCKS = 10_000;
const FAIR_LOCKS = 5;
const FAIR_WAITERS = 100; // per fair lock: 500 callers in line in Redis
const PLAIN_CONTENDED = 50;
const PLAIN_WAITERS = 10; // per contended plain lock: 500 callers of one process

/** Runs `task` over `items` with at most `width` at a time. */
async function inBatches<T, R>(items: T[], width: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += width) results.push(...(await Promise.all(items.slice(i, i + width).map(task))));
  return results;
}

/**
 * The board with 10,000 held locks and 1,000 callers waiting (500 in fair queues, 500 behind plain
 * locks): a page is read in well under a second, SCAN never blocks Redis (no command over 10 ms in the
 * slow log, no KEYS), and a filter narrows it to what matches. Times are printed for the docs.
 */
describe('the lock board with 10,000 held locks and 1,000 waiters', () => {
  const redis = useRedis();
  let app: INestApplication | undefined;
  const waits: Promise<unknown>[] = [];

  afterAll(async () => {
    await app?.close();
  });

  it('reads a page, a filter and the last page quickly, without a slow command in Redis', async () => {
    const holder: LockClient = await redis.client({ instanceName: 'holder' });
    const waiter: LockClient = await redis.client({ instanceName: 'waiter' });
    const started = performance.now();
    const names = Array.from({ length: LOCKS }, (_, i) => `scale:${String(i).padStart(5, '0')}`);
    const held: LockHandle[] = await inBatches(names, 500, (name) => holder.lock(name, '120s'));
    const fair = await Promise.all(Array.from({ length: FAIR_LOCKS }, (_, i) => holder.getFairLock(`scale:fair:${i}`).lock({ leaseTime: '120s' })));
    for (let i = 0; i < FAIR_LOCKS; i++)
      for (let j = 0; j < FAIR_WAITERS; j++)
        waits.push(waiter.runInNewContext(() => waiter.getFairLock(`scale:fair:${i}`).lock({ waitTime: '60s' })).catch(() => undefined));
    for (let i = 0; i < PLAIN_CONTENDED; i++)
      for (let j = 0; j < PLAIN_WAITERS; j++) waits.push(waiter.runInNewContext(() => waiter.lock(names[i]!, { waitTime: '60s' })).catch(() => undefined));
    await until(async () => (await waiter.inspect(names[PLAIN_CONTENDED - 1]!)).waitingHere === PLAIN_WAITERS, 'the plain waiters', 30_000);
    await until(async () => (await holder.inspect(`scale:fair:${FAIR_LOCKS - 1}`, 'fair')).waiting.length === FAIR_WAITERS, 'the fair queues', 30_000);
    const setUpMs = performance.now() - started;

    ({ app } = await startBoardApp('express', { host: redis.server().host, port: redis.server().port }, { refreshIntervalMs: 250 }));
    const url = await app.getUrl();
    await holder.redis.call('CONFIG', 'SET', 'slowlog-log-slower-than', '10000');
    await holder.redis.call('SLOWLOG', 'RESET');
    await holder.redis.call('CONFIG', 'RESETSTAT');

    const timed = async (path: string): Promise<{ ms: number; bytes: number; page: string; snapshot: BoardSnapshot }> => {
      const start = performance.now();
      const text = await (await fetch(`${url}${path}`)).text();
      const ms = performance.now() - start;
      const page = await (await fetch(`${url}${path.replace('/locks/data', '/locks')}`)).text();
      return { ms, bytes: Buffer.byteLength(page), page, snapshot: JSON.parse(text) as BoardSnapshot };
    };
    const first = await timed('/locks/data');
    expect(first.snapshot.locks).toMatchObject({ total: LOCKS + FAIR_LOCKS, truncated: false, pages: Math.ceil((LOCKS + FAIR_LOCKS) / 50) });
    expect(first.snapshot.locks.rows[0]!.waiters[0]).toMatchObject({ process: expect.stringMatching(/^waiter@/), self: false, timing: 'at-least' });
    await new Promise((resolve) => setTimeout(resolve, 300)); // past the shared read's life: the next one reads Redis again
    const again = await timed('/locks/data?page=2');
    const filtered = await timed('/locks/data?filter=scale:fair:*');
    expect(filtered.snapshot.locks.rows.map((row) => row.waiters.length)).toEqual(Array(FAIR_LOCKS).fill(FAIR_WAITERS));
    expect(filtered.page).toContain(`… and ${FAIR_WAITERS - 20} more (${FAIR_WAITERS} in all)`); // the page lists the first 20 of a line
    const last = await timed(`/locks/data?page=${first.snapshot.locks.pages}`);
    expect(last.snapshot.locks.rows.map((row) => row.name)).toEqual(Array.from({ length: FAIR_LOCKS }, (_, i) => `scale:fair:${i}`)); // sorted by name

    const slowlog = (await holder.redis.call('SLOWLOG', 'GET', '10')) as unknown[];
    const commandstats = await holder.redis.info('commandstats');
    const scans = Number(/cmdstat_scan:calls=(\d+)/.exec(commandstats)?.[1] ?? 0);
    console.log(
      `board at scale: set-up ${Math.round(setUpMs)} ms; page 1 ${Math.round(first.ms)} ms (${Math.round(first.bytes / 1024)} KB of HTML), page 2 ${Math.round(again.ms)} ms, ` +
        `filter scale:fair:* ${Math.round(filtered.ms)} ms (${Math.round(filtered.bytes / 1024)} KB, 500 waiters), last page ${Math.round(last.ms)} ms; ` +
        `${scans} SCAN calls, slow log: ${slowlog.length}`,
    );
    expect(slowlog).toEqual([]); // nothing over 10 ms: SCAN in steps, one small script per lock shown
    expect(commandstats).not.toContain('cmdstat_keys');
    expect(Math.max(first.ms, again.ms, filtered.ms, last.ms)).toBeLessThan(2000);

    await waiter.close(); // its callers stop waiting (LockClientClosedError, caught above)
    await Promise.all(waits);
    await inBatches([...held, ...fair], 1000, (handle) => handle.unlock());
  }, 90_000);
});
