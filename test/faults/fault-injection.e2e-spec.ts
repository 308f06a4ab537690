import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import {
  clusterMasterOf,
  currentSentinelMaster,
  FaultProxy,
  RedisServer,
  startCluster,
  startSentinelTopology,
  stopAllFaultProxies,
  waitUntil,
  withClient,
} from 'redis-topology';
import { FencedCounter } from '../harness/fenced-counter.mjs';
import { sharedNow as now } from '../harness/shared-clock.mjs';
import { stopAllWorkers, WorkerProcess, type WorkerMessage } from '../harness/worker-process.js';

/**
 * The fault-injection suite (reliability scenarios 5-9, 19-21, 24): worker processes increment a
 * counter in a separate Redis, fenced by their locks' tokens, while one fault after another hits
 * them. After each fault: every live process is served again (its fenced writes accepted), and we
 * record how long that took and which (typed) errors callers saw meanwhile. At the end: no stale
 * write was accepted (the accepted writes came in token order), no update was lost (the counter
 * equals the number of accepted writes), no error was untyped, and nothing is left in Redis.
 */

interface PhaseFigures {
  fault: string;
  /** Errors the callers saw from the fault's start until the next fault (or the end), by code. */
  errors: Record<string, number>;
  /** Reads or writes the resource refused (stale tokens), and sections that found their lock lost first. */
  refused: number;
  abandoned: number;
  /** From the end of the fault (heal, resume, restart) to the last live process's first accepted write. */
  recoveryMs: number;
}

type Counts = { errors: Record<string, number>; refused: number; abandoned: number };
type Progress = WorkerMessage & Counts & { accepted: number; lastAccepted: number };

/** The fenced workers of one run, and the bookkeeping of its phases. */
class FencedRun {
  readonly phases: PhaseFigures[] = [];
  private readonly healedAt: number[] = [];
  /** Every worker's counts when each phase started: a phase's figures run to the next one's start. */
  private readonly startCounts: Counts[][] = [];

  constructor(
    readonly workers: WorkerProcess[],
    private readonly counter: FencedCounter,
  ) {}

  static async start(envs: Record<string, string | number>[]): Promise<FencedRun> {
    const workers = envs.map((env) => WorkerProcess.start('fenced-worker.mjs', env));
    await Promise.all(workers.map((worker) => worker.waitForType('ready')));
    return new FencedRun(workers, undefined as unknown as FencedCounter);
  }

  withCounter(counter: FencedCounter): this {
    (this as unknown as { counter: FencedCounter }).counter = counter;
    return this;
  }

  get live(): WorkerProcess[] {
    return this.workers.filter((worker) => worker.isRunning);
  }

  latest(worker: WorkerProcess): Progress {
    return (
      ([...worker.messages].reverse().find((m) => m.type === 'progress') as Progress | undefined) ??
      ({ type: 'progress', accepted: 0, lastAccepted: 0, errors: {}, refused: 0, abandoned: 0 } as Progress)
    );
  }

  /** Resolves when `worker` has `more` accepted writes beyond what it had when called. */
  async accepted(worker: WorkerProcess, more: number, timeoutMs = 20_000): Promise<void> {
    const target = this.latest(worker).accepted + more;
    await worker.waitFor((m) => m.type === 'progress' && (m.accepted as number) >= target, `${more} more accepted writes`, timeoutMs);
  }

  /** Resolves when some worker other than `except` has an accepted write after now. */
  async othersServed(except: WorkerProcess): Promise<void> {
    const since = now();
    await Promise.race(
      this.live
        .filter((worker) => worker !== except)
        .map((worker) => worker.waitFor((m) => m.type === 'progress' && (m.lastAccepted as number) > since, 'an accepted write by another process', 20_000)),
    );
  }

  /** Runs one fault: `inject` applies it and resolves when it is over; then every live process must be served again. */
  async phase(fault: string, inject: () => Promise<void>): Promise<void> {
    this.startCounts.push(this.workers.map((worker) => this.latest(worker)));
    await inject();
    const healed = now();
    await Promise.all(
      this.live.map((worker) =>
        worker.waitFor((m) => m.type === 'progress' && (m.lastAccepted as number) > healed, `${fault}: an accepted write after the fault`, 30_000),
      ),
    );
    this.healedAt.push(healed);
    this.phases.push({ fault, errors: {}, refused: 0, abandoned: 0, recoveryMs: 0 });
  }

  /** Fills in each phase's counts: from its start to the next phase's start (the last: to `final`). */
  private countPhases(final: Counts[]): void {
    const bounds = [...this.startCounts, final];
    this.phases.forEach((phase, p) => {
      const [from, to] = [bounds[p]!, bounds[p + 1]!];
      to.forEach((counts, i) => {
        for (const [code, n] of Object.entries(counts.errors)) {
          const delta = n - (from[i]!.errors[code] ?? 0);
          if (delta > 0) phase.errors[code] = (phase.errors[code] ?? 0) + delta;
        }
        phase.refused += counts.refused - from[i]!.refused;
        phase.abandoned += counts.abandoned - from[i]!.abandoned;
      });
    });
  }

  /** Stops every live worker and checks the invariants; fills in the recovery times from the exact write times. */
  async finish(): Promise<void> {
    for (const worker of this.live) worker.send('stop');
    const done = await Promise.all(this.live.map((worker) => worker.waitForType('done', 30_000)));
    // Final counts: from 'done' for those that stopped, the last progress of those killed before.
    this.countPhases(
      this.workers.map((worker) => (worker.messages.find((m) => m.type === 'done') as (WorkerMessage & Counts) | undefined) ?? this.latest(worker)),
    );
    const untyped = done.flatMap((message) => message.untyped as string[]);
    expect(untyped).toEqual([]);
    // No lock reported lost after its unlock() resolved (a hold Redis kept that the caller did not know of).
    expect(done.flatMap((message) => message.lostAfterUnlock as unknown[])).toEqual([]);
    // No lost update, no stale write: the counter is the number of accepted writes, in token order.
    const history = await this.counter.history();
    const killed = this.workers.filter((worker) => !done.some((message) => worker.messages.includes(message)));
    const acceptedByKilled = killed.reduce((sum, worker) => sum + this.latest(worker).accepted, 0);
    const acceptedTimes = done.flatMap((message) => message.accepted as number[]);
    expect(history.value).toBe(history.tokens.length);
    // A killed process's last writes may go unreported: the log has at least what the others reported.
    expect(history.tokens.length).toBeGreaterThanOrEqual(acceptedTimes.length + acceptedByKilled);
    for (let i = 1; i < history.tokens.length; i++) expect(history.tokens[i]).toBeGreaterThanOrEqual(history.tokens[i - 1]!);
    // Recovery: from each fault's end to the last live process's first accepted write after it.
    const perWorker = done.map((message) => (message.accepted as number[]).slice().sort((a, b) => a - b));
    this.healedAt.forEach((healed, i) => {
      const firsts = perWorker.map((times) => times.find((t) => t > healed)).filter((t): t is number => t !== undefined);
      this.phases[i]!.recoveryMs = Math.round(Math.max(...firsts) - healed);
    });
  }
}

/** Keeps the figures of a run (results/faults/<name>.json) for the README's guarantees table. */
function recordFigures(name: string, phases: PhaseFigures[]): void {
  const directory = fileURLToPath(new URL('../../results/faults/', import.meta.url));
  mkdirSync(directory, { recursive: true });
  writeFileSync(join(directory, `${name}.json`), `${JSON.stringify(phases, null, 2)}\n`);
}

/**
 * Keys the library leaves behind in `redis` other than fencing counters (which never expire, by
 * design) and processes' inspection labels (`lock:clients:<id>`, which expire a minute after their
 * process stopped refreshing them: a SIGKILLed worker's stays that long).
 */
async function lockKeysLeft(redis: Redis): Promise<string[]> {
  return (await redis.keys('lock:*')).filter((key) => !key.endsWith(':fence') && !key.startsWith('lock:clients:'));
}

describe('fault injection: processes on a fenced counter through one fault after another', () => {
  let resourceServer: RedisServer;
  let resourceRedis: Redis;
  beforeAll(async () => {
    resourceServer = await RedisServer.start();
    resourceRedis = resourceServer.client();
  });
  afterEach(async () => {
    await stopAllWorkers();
    await stopAllFaultProxies();
    await resourceRedis.flushall();
  });
  afterAll(async () => {
    await resourceServer.stop();
    resourceServer.cleanup();
  });

  const common = (): Record<string, string | number> => ({
    RESOURCE_PORT: resourceServer.port,
    LOCK_NAME: 'faults:counter',
    CONTEXTS: 2,
    WATCHDOG: 1000,
    WAIT_MS: 2000,
    OPERATION_TIMEOUT: 500,
  });

  it('single: pause past the lease, black-hole, latency, reset, SIGKILL of a holder, Redis restart', async () => {
    const lockServer = await RedisServer.start();
    try {
      const proxies = await Promise.all(Array.from({ length: 4 }, () => FaultProxy.start({ targetPort: lockServer.port })));
      const run = (
        await FencedRun.start(
          proxies.map((proxy) => ({
            ...common(),
            DISTRIBUTED_LOCK_REDIS_MODE: 'single',
            DISTRIBUTED_LOCK_REDIS_HOST: proxy.host,
            DISTRIBUTED_LOCK_REDIS_PORT: proxy.port,
          })),
        )
      ).withCounter(new FencedCounter(resourceRedis));
      const [w0, w1, w2, w3] = run.workers as [WorkerProcess, WorkerProcess, WorkerProcess, WorkerProcess];
      await Promise.all(run.workers.map((worker) => run.accepted(worker, 5)));

      await run.phase('holder paused (SIGSTOP) past its 1 s lease', async () => {
        const holding = w0.messages.length;
        w0.send('hold-next');
        await w0.waitFor((m) => m.type === 'holding' && w0.messages.indexOf(m) >= holding, 'holding');
        w0.signal('SIGSTOP');
        await run.othersServed(w0); // only possible once its lease ran out
        w0.signal('SIGCONT');
      });
      await run.phase("one process's link black-holed until its calls time out", async () => {
        const before = run.latest(w1).errors.LOCK_BACKEND_ERROR ?? 0;
        proxies[1]!.blackhole();
        await w1.waitFor((m) => m.type === 'progress' && ((m.errors as Record<string, number>).LOCK_BACKEND_ERROR ?? 0) > before, 'a timed-out call');
        await run.othersServed(w1);
        proxies[1]!.heal();
      });
      await run.phase("200 ms of added latency each way on one process's link", async () => {
        proxies[2]!.setLatency(200);
        await run.accepted(w2, 2); // served, slowly
        await run.othersServed(w2);
        proxies[2]!.heal();
      });
      await run.phase('every link reset (TCP RST)', async () => {
        for (const proxy of proxies) proxy.reset();
      });
      await run.phase('a holder killed (SIGKILL)', async () => {
        const holding = w3.messages.length;
        w3.send('hold-next');
        await w3.waitFor((m) => m.type === 'holding' && w3.messages.indexOf(m) >= holding, 'holding');
        w3.signal('SIGKILL');
        await w3.exited;
      });
      await run.phase('lock Redis restarted without persistence (locks and fencing counters lost)', async () => {
        await lockServer.restart();
      });
      await run.finish();
      recordFigures('single', run.phases);

      const admin = lockServer.client();
      await waitUntil(async () => (await lockKeysLeft(admin)).length === 0, "every lock key to be gone (the killed holder's expires with its lease)", 10_000);
      expect(await lockKeysLeft(admin)).toEqual([]);
    } finally {
      await stopAllWorkers();
      await lockServer.stop();
      lockServer.cleanup();
    }
  }, 120_000);

  it('sentinel: the master is killed under load and a replica promoted', async () => {
    const topology = await startSentinelTopology({ replicas: 1 });
    try {
      const run = (await FencedRun.start([0, 1, 2].map(() => ({ ...common(), ...topology.env })))).withCounter(new FencedCounter(resourceRedis));
      await Promise.all(run.workers.map((worker) => run.accepted(worker, 5)));
      const replica = topology.servers[1]!;
      await run.phase('sentinel: master SIGKILLed, replica promoted', async () => {
        topology.servers[0]!.killNow();
        await waitUntil(async () => (await currentSentinelMaster(topology)) === `${replica.host}:${replica.port}`, 'the promotion', 30_000);
      });
      await run.finish();
      recordFigures('sentinel', run.phases);
      const admin = replica.client();
      await waitUntil(async () => (await lockKeysLeft(admin)).length === 0, 'every lock key to be gone', 10_000);
    } finally {
      await stopAllWorkers();
      await topology.stop();
    }
  }, 120_000);

  it("cluster: the lock slot's master killed, restarted, failed over by hand, and frozen past the node timeout, under load", async () => {
    const topology = await startCluster({ masters: 3, replicasPerMaster: 1 });
    try {
      const run = (await FencedRun.start([0, 1, 2].map(() => ({ ...common(), ...topology.env })))).withCounter(new FencedCounter(resourceRedis));
      await Promise.all(run.workers.map((worker) => run.accepted(worker, 5)));
      const slot = Number(await withClient(topology.servers[0]!, (redis) => redis.call('CLUSTER', 'KEYSLOT', 'lock:{faults:counter}')));
      const servingSlot = async (): Promise<number> => (await clusterMasterOf(topology, slot)).master.port;
      const first = await clusterMasterOf(topology, slot);
      const [original, replica] = [first.master, first.replicas[0]!];
      await run.phase("cluster: the slot's master SIGKILLed, its replica elected", async () => {
        original.killNow();
        await waitUntil(async () => (await servingSlot()) === replica.port, 'the replica to take the slot', 30_000);
      });
      await run.phase('cluster: the killed master restarted empty; it rejoins as a replica', async () => {
        await original.restart();
        await waitUntil(
          () => withClient(original, async (redis) => /master_link_status:up/.test(await redis.info('replication'))),
          'the restarted node to replicate the new master',
          30_000,
        );
      });
      await run.phase('cluster: manual failover (CLUSTER FAILOVER) back to the restarted node', async () => {
        // A manual failover that does not complete within cluster's mf timeout (5 s; a loaded machine can
        // miss it) is abandoned by Redis, not retried: ask again until the slot has moved.
        let askedAt = -Infinity;
        await waitUntil(
          async () => {
            if ((await servingSlot()) === original.port) return true;
            if (performance.now() - askedAt > 6000) {
              askedAt = performance.now();
              await withClient(original, (redis) => redis.call('CLUSTER', 'FAILOVER'));
            }
            return false;
          },
          'the restarted node to take the slot back',
          30_000,
        );
      });
      await run.phase("cluster: the slot's master frozen (SIGSTOP) past the node timeout, its replica elected, then thawed", async () => {
        original.pause();
        try {
          // Asked of the replica itself: a frozen node accepts connections but answers nothing.
          await waitUntil(
            () => withClient(replica, async (redis) => /role:master/.test(await redis.info('replication'))),
            'the replica to take the slot from the frozen master',
            30_000,
          );
        } finally {
          original.resume();
        }
        await waitUntil(
          () => withClient(original, async (redis) => /role:slave/.test(await redis.info('replication'))),
          'the thawed node to become a replica',
          30_000,
          // What each of the two nodes thinks, for a failure's report (seen once in CI, not reproduced).
          async () =>
            (
              await Promise.all(
                [original, replica].map((node) =>
                  withClient(node, async (redis) => {
                    const myself = String(await redis.call('CLUSTER', 'NODES'))
                      .split('\n')
                      .find((line) => line.includes('myself'));
                    return `${node.port}: ${/role:\w+/.exec(await redis.info('replication'))?.[0]} / ${myself}`;
                  }).catch((error: unknown) => `${node.port}: ${(error as Error).message}`),
                ),
              )
            ).join(' | '),
        );
      });
      await run.finish();
      recordFigures('cluster', run.phases);
      // Every process closed gracefully: no hold is left on any master, at once (not after a lease).
      // (A replica may still show a key its master has just deleted: replication is asynchronous.)
      const running = topology.servers.filter((server) => server.isRunning).map((server) => server.client());
      const roles = await Promise.all(running.map(async (admin) => /role:master/.test(await admin.info('replication'))));
      const masters = running.filter((_, i) => roles[i]);
      expect(masters).toHaveLength(3);
      expect((await Promise.all(masters.map(lockKeysLeft))).flat()).toEqual([]);
    } finally {
      await stopAllWorkers();
      await topology.stop();
    }
  }, 150_000);
});
