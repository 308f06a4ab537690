/**
 * A process of the contended scenarios: `callers` concurrent callers that each loop on
 * acquire(one shared key) -> GET counter -> SET counter + 1 -> release, until the run's time is up
 * (the semaphore scenario: INCR of the permits in use, checked against the permits, then DECR).
 * Driven by the parent over IPC (see contended-protocol.ts): open, then go (sent to every worker
 * at once after all of them are ready), then it reports its sections and wait times.
 */
import { Redis } from 'ioredis';
import { adapterById, CouldNotRun, type LockSession, type RedisTarget } from '../adapters/index.js';
import type { FromWorker, Section, ToWorker } from './contended-protocol.js';
import { describeError, ErrorTally } from './scenario.js';

let counterClient: Redis | undefined;
let session: LockSession | undefined;
let job: { lockKey: string; counterKey: string; callers: number; section: Section } | undefined;

function send(message: FromWorker): void {
  process.send!(message);
}

async function counter(target: RedisTarget): Promise<Redis> {
  counterClient ??= new Redis({ host: target.host, port: target.port });
  await counterClient.ping();
  return counterClient;
}

async function open(message: Extract<ToWorker, { type: 'open' }>): Promise<void> {
  try {
    await counter(message.target);
    session = await adapterById(message.adapter).open(message.target);
    job = message;
    send({ type: 'ready' });
  } catch (error) {
    send({ type: 'open-failed', couldNotRun: error instanceof CouldNotRun, reason: describeError(error) });
  }
}

/**
 * Runs the callers until the time is up. A caller that is still waiting `graceMs` after that (a
 * library that missed a wake-up and sleeps until a lease runs out) is not waited for: its wait so far
 * is counted as a wait (censored: it waited at least that long) and reported as unfinished, and if it
 * gets the lock later it releases it without touching the counter, so the count stays exact.
 */
async function go(durationMs: number, graceMs: number): Promise<void> {
  const { lockKey, counterKey, callers, section } = job!;
  const redis = counterClient!;
  const lock = session!;
  const errors = new ErrorTally();
  const waitsMs: number[] = [];
  const waitingSince = new Set<number>();
  let sections = 0;
  let inSection = 0;
  let maxInUse = 0;
  let overPermits = 0;
  let stopped = false;
  const started = performance.now();
  const deadline = started + durationMs;
  let lastEnd = started;
  const caller = async (): Promise<void> => {
    while (!stopped && performance.now() < deadline) {
      const asked = performance.now();
      waitingSince.add(asked);
      let release;
      try {
        release = await lock.acquire(lockKey);
      } catch (error) {
        if (!stopped) errors.record(error);
        continue;
      } finally {
        waitingSince.delete(asked);
      }
      if (stopped) {
        await release().catch(() => undefined);
        return;
      }
      waitsMs.push(performance.now() - asked);
      inSection += 1;
      try {
        if (section.kind === 'counter') {
          const value = Number((await redis.get(counterKey)) ?? 0);
          await redis.set(counterKey, value + 1);
        } else {
          const inUse = await redis.incr(counterKey);
          maxInUse = Math.max(maxInUse, inUse);
          if (inUse > section.permits) overPermits += 1;
          await redis.decr(counterKey);
        }
        sections += 1;
      } catch (error) {
        errors.record(error);
      }
      inSection -= 1;
      try {
        await release();
      } catch (error) {
        errors.record(error);
      }
      lastEnd = performance.now();
    }
  };
  const all = Promise.all(Array.from({ length: callers }, caller));
  let cutTimer: NodeJS.Timeout | undefined;
  const cut = new Promise<void>((resolve) => {
    cutTimer = setTimeout(resolve, durationMs + graceMs);
  });
  await Promise.race([all, cut]);
  clearTimeout(cutTimer);
  stopped = true;
  // No caller may be between its GET and SET when the parent reads the counter.
  while (inSection > 0) await new Promise((resolve) => setTimeout(resolve, 1));
  const now = performance.now();
  const unfinished = [...waitingSince].map((since) => now - since);
  const report: FromWorker = {
    type: 'done',
    sections,
    waitsMs: [...waitsMs, ...unfinished],
    unfinishedWaits: unfinished.length,
    elapsedMs: (unfinished.length ? now : lastEnd) - started,
    errors: errors.toJSON(),
    maxInUse,
    overPermits,
  };
  send(report);
  session = undefined;
  // Close after reporting: a library whose waits never end may also be slow to close.
  void lock.close().catch(() => undefined);
}

process.on('message', (message: ToWorker) => {
  if (message.type === 'open') void open(message);
  else if (message.type === 'go') void go(message.durationMs, message.graceMs);
  else if (message.type === 'exit') {
    void Promise.all([session?.close(), counterClient?.quit()]).finally(() => process.exit(0));
  }
});
// The parent went away (Ctrl-C, crash): do not linger.
process.on('disconnect', () => process.exit(0));
// A library's background failure (a timer of a closed session, a wait cut off at the end of a run)
// must not end the worker: it is logged, and the runs' own error counts say what the callers saw.
process.on('unhandledRejection', (reason) => console.error(`unhandled rejection in a contended worker: ${describeError(reason)}`));
process.on('uncaughtException', (error) => console.error(`uncaught exception in a contended worker: ${describeError(error)}`));
