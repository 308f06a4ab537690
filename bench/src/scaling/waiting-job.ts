import { adapterById, CouldNotRun, type Release } from '../adapters/index.js';
import { ErrorTally, type RunOutcome } from '../scenarios/scenario.js';
import { Samples } from '../stats.js';
import { holderFor } from './holders.js';
import { adminConnection, forEachConcurrently, PER_UNIT_MIN, sleep } from './job-helpers.js';
import { ADMIN_NAME, type WaitingJob } from './protocol.js';
import { cpuMsSince, heapAfterGc, redisDelta, redisSnapshot, subscriptionCounts } from './redis-probe.js';

/** A long period: the holders' locks neither renew nor expire during a run. */
const HOLDER_PERIOD_MS = 600_000;

interface Entry {
  at: number;
  release: Release;
}

/** Entries of waiting callers into their lock, by name, in the order they came, for whoever waits for the next one. */
class EntryBoard {
  private readonly queued = new Map<string, Entry[]>();
  private readonly wanted = new Map<string, (entry: Entry) => void>();
  count = 0;

  enter(name: string, release: Release): void {
    this.count += 1;
    const entry = { at: performance.now(), release };
    const wanted = this.wanted.get(name);
    if (wanted) {
      this.wanted.delete(name);
      wanted(entry);
    } else {
      const queue = this.queued.get(name);
      if (queue) queue.push(entry);
      else this.queued.set(name, [entry]);
    }
  }

  next(name: string, timeoutMs: number): Promise<Entry | undefined> {
    const queued = this.queued.get(name)?.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wanted.delete(name);
        resolve(undefined);
      }, timeoutMs);
      this.wanted.set(name, (entry) => {
        clearTimeout(timer);
        resolve(entry);
      });
    });
  }
}

/**
 * `waiters` callers of one process wait on `names` names (caller j on name j mod names), all held by
 * another client (its own connections, like another process). Measured while they wait, over a
 * window: subscriptions and connections on the server, Redis CPU and commands per second, this
 * process's CPU; after a full GC, the heap per waiter; and Redis's used_memory per waiter. Then the time
 * from a release to the next holder's entry (from the release call to the moment the waiter's acquire
 * resolves): phase 1, the other client releases names one after the other; phase 2, on the first name,
 * each caller that got in releases at once, passing the lock down its queue.
 */
export async function runWaitingJob(job: WaitingJob): Promise<RunOutcome> {
  const holder = holderFor(job.library);
  if (!holder) throw new CouldNotRun(`${job.library}: no hold implementation in the scaling set`);
  const admin = await adminConnection(job.target);
  const holding = await holder.open(job.target, HOLDER_PERIOD_MS);
  const connectionsBefore = (await subscriptionCounts(admin, ADMIN_NAME)).connections;
  const waiting = await adapterById(job.library).open(job.target);
  await (await holding.hold('bench:waiting:warm-up')).release();
  await (
    await waiting.acquire('bench:waiting:warm-up')
  )();

  const names = Array.from({ length: job.names }, (_, i) => `bench:waiting:${i}`);
  const holds = await forEachConcurrently(names.length, 256, (i) => holding.hold(names[i]!));
  const heapHeld = heapAfterGc();
  const memoryHeld = (await redisSnapshot(admin)).usedMemory;

  const board = new EntryBoard();
  const errors = new ErrorTally();
  for (let j = 0; j < job.waiters; j++) {
    const lockName = names[j % names.length]!;
    waiting.acquire(lockName).then(
      (release) => board.enter(lockName, release),
      (error: unknown) => errors.record(error),
    );
  }
  await sleep(job.settleMs);

  const redisFrom = await redisSnapshot(admin);
  const cpuFrom = process.cpuUsage();
  const windowStarted = performance.now();
  await sleep(job.windowMs);
  const clientCpuMs = cpuMsSince(cpuFrom);
  const redis = redisDelta(redisFrom, await redisSnapshot(admin));
  const windowSec = (performance.now() - windowStarted) / 1000;
  const subscriptions = await subscriptionCounts(admin, ADMIN_NAME);
  const memoryWaiting = (await redisSnapshot(admin)).usedMemory;
  const heapWaiting = heapAfterGc();
  const earlyEntries = board.count;

  // Phase 1: the other client releases names one after the other; the first waiter of each gets in and keeps it.
  const first = new Samples();
  let unfinished = 0;
  const current = new Map<string, Release>();
  const phase1Started = performance.now();
  for (let i = 0; i < Math.min(job.firstReleases, names.length) && performance.now() - phase1Started < job.phaseCapMs; i++) {
    const started = performance.now();
    const released = holds[i]!.release().catch((error: unknown) => errors.record(error));
    const entry = await board.next(names[i]!, job.entryTimeoutMs);
    await released;
    if (!entry) {
      unfinished += 1;
      break;
    }
    first.add(entry.at - started);
    current.set(names[i]!, entry.release);
  }

  // Phase 2: on the first name, whoever got in releases at once; the lock goes down the queue.
  const chain = new Samples();
  const queuedOnFirst = Math.ceil(job.waiters / names.length) - 1;
  let holderRelease = current.get(names[0]!);
  const phase2Started = performance.now();
  for (let c = 0; holderRelease && c < Math.min(job.chainReleases, queuedOnFirst) && performance.now() - phase2Started < job.phaseCapMs; c++) {
    const started = performance.now();
    const released = holderRelease().catch((error: unknown) => errors.record(error));
    const entry = await board.next(names[0]!, job.entryTimeoutMs);
    await released;
    if (!entry) {
      unfinished += 1;
      break;
    }
    chain.add(entry.at - started);
    holderRelease = entry.release;
  }

  const metrics: Record<string, number> = {
    waiters: job.waiters,
    names: job.names,
    subscriptions: subscriptions.subscriptions,
    channels: subscriptions.channels,
    connections: subscriptions.connections - connectionsBefore,
    heapBytesPerWaiter: job.waiters >= PER_UNIT_MIN ? (heapWaiting - heapHeld) / job.waiters : NaN,
    redisBytesPerWaiter: job.waiters >= PER_UNIT_MIN ? (memoryWaiting - memoryHeld) / job.waiters : NaN,
    redisCpuMsPerSec: redis.cpuMs / windowSec,
    redisCommandsPerSec: redis.commands / windowSec,
    clientCpuMsPerSec: clientCpuMs / windowSec,
    firstEntries: first.count,
    firstEntryP50Ms: first.count ? first.p(50) : NaN,
    firstEntryMaxMs: first.count ? first.p(100) : NaN,
    chainEntries: chain.count,
    chainEntryP50Ms: chain.count ? chain.p(50) : NaN,
    chainEntryP99Ms: chain.count ? chain.p(99) : NaN,
    unfinishedEntries: unfinished,
    earlyEntries,
  };
  admin.disconnect();
  return { metrics, errors: errors.toJSON() };
}
