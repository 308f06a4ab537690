import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import type { LockClient, LockHandle } from 'nestjs-distributed-lock';
import type { BoardSnapshot } from 'nestjs-distributed-lock/board';
import { commandsOfOthers, connectedAddresses, logCommands, type LoggedCommand } from '../harness/command-log.js';
import { useRedis } from '../harness/use-redis.js';
import { until } from '../harness/wait.js';
import { startBoardApp } from './board-app.js';

const LOCKS = 10_000;
const FAIR_LOCKS = 5;
const FAIR_WAITERS = 100; // per fair lock: 500 callers in line in Redis
const PLAIN_CONTENDED = 50;
const PLAIN_WAITERS = 10; // per contended plain lock: 500 callers of one process

/** Keys one SCAN call may read: the library's step (lock-scan.ts). */
const SCAN_STEP = 1000;

/**
 * What the board's commands asked of Redis, counted rather than timed (a busy machine makes any
 * command slow; it does not change what is sent): KEYS calls, SCAN calls reading more than a step,
 * scripts over more keys than one lock has, and how many scripts ran in all.
 */
function weighCommands(commands: LoggedCommand[]): { keys: string[]; wideScans: string[]; wideScripts: string[]; scans: number; scripts: number } {
  const name = (command: LoggedCommand): string => command.args[0]!.toLowerCase();
  const shown = (command: LoggedCommand): string => command.args.slice(0, 8).join(' ');
  const scans = commands.filter((command) => name(command) === 'scan');
  const scripts = commands.filter((command) => ['eval', 'evalsha', 'eval_ro', 'evalsha_ro', 'fcall', 'fcall_ro'].includes(name(command)));
  const countOf = (command: LoggedCommand): number => {
    const at = command.args.findIndex((arg) => arg.toLowerCase() === 'count');
    return at < 0 ? 10 : Number(command.args[at + 1]); // SCAN's default COUNT is 10
  };
  return {
    keys: commands.filter((command) => name(command) === 'keys').map(shown),
    wideScans: scans.filter((command) => !(countOf(command) <= SCAN_STEP)).map(shown),
    // One lock per script: every key with a {hash tag} has the same one (the inspection script reads
    // all of one lock's keys: its hash, queue, reader and permit sets).
    wideScripts: scripts
      .filter((command) => new Set(command.args.slice(3, 3 + Number(command.args[2])).flatMap((key) => /\{[^}]*\}/.exec(key) ?? [])).size > 1)
      .map(shown),
    scans: scans.length,
    scripts: scripts.length,
  };
}

/** Runs `task` over `items` with at most `width` at a time. */
async function inBatches<T, R>(items: T[], width: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += width) results.push(...(await Promise.all(items.slice(i, i + width).map(task))));
  return results;
}

/**
 * The board with 10,000 held locks and 1,000 callers waiting (500 in fair queues, 500 behind plain
 * locks): what it sends Redis stays small whatever the keyspace (SCAN in steps of 1,000 keys, never
 * KEYS, one small script per lock shown and none for the locks not shown), and a filter narrows the
 * page to what matches. Checked by counting the board's commands in a MONITOR log, with a control
 * that a reader which does read everything fails the same check. Times and the slow log are printed
 * for the docs, not asserted: a loaded machine makes any command slow.
 */
describe('the lock board with 10,000 held locks and 1,000 waiters', () => {
  const redis = useRedis();
  let app: INestApplication | undefined;
  let admin: Redis | undefined;
  const waits: Promise<unknown>[] = [];

  afterAll(async () => {
    admin?.disconnect();
    await app?.close();
  });

  it('reads a page, a filter and the last page with bounded commands: SCAN in steps, no KEYS, one script per lock shown', async () => {
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

    // Every connection open now is the test's (holder, waiter): what comes from others is the board's.
    admin = redis.server().client();
    const tests = await connectedAddresses(admin);
    ({ app } = await startBoardApp('express', { host: redis.server().host, port: redis.server().port }, { refreshInterval: 250 }));
    const url = await app.getUrl();
    await admin.config('SET', 'slowlog-log-slower-than', '10000');
    await admin.call('SLOWLOG', 'RESET');
    await admin.config('RESETSTAT');
    const log = await logCommands(admin);

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

    const board = commandsOfOthers(await log.stop(), tests);
    const slowlog = (await admin.call('SLOWLOG', 'GET', '10')) as unknown[];
    const commandstats = await admin.info('commandstats');
    const weighed = weighCommands(board);
    console.log(
      `board at scale: set-up ${Math.round(setUpMs)} ms; page 1 ${Math.round(first.ms)} ms (${Math.round(first.bytes / 1024)} KB of HTML), page 2 ${Math.round(again.ms)} ms, ` +
        `filter scale:fair:* ${Math.round(filtered.ms)} ms (${Math.round(filtered.bytes / 1024)} KB, 500 waiters), last page ${Math.round(last.ms)} ms; ` +
        `the board sent ${board.length} commands: ${weighed.scans} SCAN, ${weighed.scripts} scripts; slow log (over 10 ms): ${slowlog.length}`,
    );
    expect(weighed.scans).toBeGreaterThan(0); // the log saw the board (its connections are not the test's)
    expect(commandstats).not.toContain('cmdstat_keys');
    expect({ keys: weighed.keys, wideScans: weighed.wideScans, wideScripts: weighed.wideScripts }).toEqual({ keys: [], wideScans: [], wideScripts: [] });
    // Eight page reads (four views, each as JSON and as HTML), each inspecting at most its page of 50
    // rows (plus the processes' labels): nothing proportional to the 10,005 locks.
    expect(weighed.scripts).toBeLessThanOrEqual(8 * 60);

    await waiter.close(); // its callers stop waiting (LockClientClosedError, caught above)
    await Promise.all(waits);
    await inBatches([...held, ...fair], 1000, (handle) => handle.unlock());
  }, 90_000);

  it('control: a reader that takes everything in one command fails the same check', async () => {
    const observer = redis.server().client();
    const reader = redis.server().client();
    try {
      await reader.ping();
      const tests = await connectedAddresses(observer);
      tests.delete(`${(await reader.call('CLIENT', 'INFO')) as string}`.match(/addr=(\S+)/)![1]!);
      const log = await logCommands(observer);
      await reader.keys('lock:*');
      await reader.scan('0', 'MATCH', 'lock:{*}*', 'COUNT', 100_000);
      await reader.eval('return #KEYS', 20, ...Array.from({ length: 20 }, (_, i) => `lock:{scale:${i}}`));
      const weighed = weighCommands(commandsOfOthers(await log.stop(), tests));
      expect(weighed).toMatchObject({
        keys: ['keys lock:*'],
        wideScans: [expect.stringMatching(/COUNT 100000$/)],
        wideScripts: [expect.stringMatching(/^eval return #KEYS 20 /)],
      });
    } finally {
      observer.disconnect();
      reader.disconnect();
    }
  });
});
