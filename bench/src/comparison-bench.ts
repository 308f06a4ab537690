import { Redis } from 'ioredis';
import { adapterById, CouldNotRun, SEMAPHORE_PERMITS, type LockAdapter, type RedisTarget } from './adapters/index.js';
import { BenchServer } from './bench-server.js';
import type { ServerChoice } from './bench-servers.js';
import type { BenchOptions, BenchScenario } from './options.js';
import { formatRun } from './report.js';
import { makeRow, type RoundRun, type ScenarioResult } from './results.js';
import { ContendedPool } from './scenarios/contended.js';
import { DECORATOR_LOAD, DECORATOR_ROUTES, DecoratorApp, type DecoratorRoute } from './scenarios/decorator.js';
import { runParallel } from './scenarios/parallel.js';
import { describeError, type RunOutcome } from './scenarios/scenario.js';
import { runSerial } from './scenarios/serial.js';

const DESCRIPTIONS: Record<BenchScenario, { title: string; description: (o: BenchOptions) => string }> = {
  serial: {
    title: 'Serial: one caller, a new key per cycle',
    description: (o) =>
      `acquire + release in a loop for ${o.serialMs} ms after ${o.serialWarmup} warm-up cycles; latency of one cycle (two round trips at least)`,
  },
  parallel: {
    title: `Parallel: concurrent callers in one process, a new key per cycle`,
    description: (o) => `${o.parallelCallers} callers loop acquire + release for ${o.parallelMs} ms (after ${o.parallelWarmupMs} ms warm-up); no contention`,
  },
  contended: {
    title: 'Contended: one key, several processes',
    description: (o) =>
      `${o.contendedProcesses} processes x ${o.contendedCallers} callers loop on one lock for ${o.contendedMs} ms (started together once all are connected); ` +
      'critical section = GET + SET (increment) of a counter on a separate connection; wait = time to acquire; busiest process = its share of the sections (25 % each when even); lost updates = sections - final counter; ' +
      `a caller still waiting ${o.contendedGraceMs} ms after the end is cut off and counted as unfinished, its wait so far included in the percentiles`,
  },
  semaphore: {
    title: `Semaphore: one semaphore of ${SEMAPHORE_PERMITS} permits, several processes`,
    description: (o) =>
      `${o.contendedProcesses} processes x ${o.contendedCallers} callers loop on one permit each of one semaphore for ${o.contendedMs} ms (started together once all are connected); ` +
      `section = INCR + DECR of a count of permits in use on a separate connection (max in use: the highest count seen, never above ${SEMAPHORE_PERMITS} for a correct semaphore; over permits: sections that saw more); ` +
      'wait = time to acquire; busiest process = its share of the sections (25 % each when even); a caller still waiting ' +
      `${o.contendedGraceMs} ms after the end is cut off and counted as unfinished`,
  },
  decorator: {
    title: 'Decorator overhead: the same Nest endpoint with and without @DistributedLock',
    description: (o) =>
      `platform-express app in its own process; autocannon, ${DECORATOR_LOAD.connections} connection, ${o.decoratorMs} ms per route per round after ${o.decoratorWarmupMs} ms warm-up; ` +
      'a new lock name per request (no contention, so the difference is overhead); added = p50(locked) - p50(plain); ' +
      "round trips = the raw baseline's serial p50 of the same round (SET NX PX + EVALSHA)",
  },
};

/**
 * The comparison on one server: starts it (and the contended processes, the decorator app), runs the
 * rounds, libraries interleaved within each, and gives each scenario's rows.
 */
export class ComparisonBench {
  private redis: BenchServer | undefined;
  private pool: ContendedPool | undefined;
  private app: DecoratorApp | undefined;
  private readonly runs = new Map<string, RoundRun[]>();
  /** Rows known not to run here: skipped after their first attempt, with the reason. */
  private readonly couldNotRun = new Map<string, string>();

  constructor(
    private readonly options: BenchOptions,
    private readonly server: ServerChoice,
  ) {}

  private adapters(scenario: BenchScenario): LockAdapter[] {
    return this.options.libraries.map(adapterById).filter((a) => scenario !== 'decorator' && a.scenarios.includes(scenario));
  }

  private record(scenario: string, id: string, run: RoundRun): void {
    const key = `${scenario}/${id}`;
    if (!this.runs.has(key)) this.runs.set(key, []);
    this.runs.get(key)!.push(run);
  }

  private get admin(): Redis | undefined {
    return this.redis?.admin;
  }

  private get target(): RedisTarget {
    return this.redis!.target;
  }

  async start(): Promise<void> {
    this.redis = await BenchServer.start(undefined, this.server.bin);
    console.log(`${await this.redisVersion()} (${this.server.id}) started on ${this.target.host}:${this.target.port}`);
    if (this.options.scenarios.includes('contended') || this.options.scenarios.includes('semaphore')) {
      this.pool = new ContendedPool(this.options.contendedProcesses);
      this.pool.start();
    }
    if (this.options.scenarios.includes('decorator')) {
      this.app = new DecoratorApp();
      await this.app.start(this.target);
    }
  }

  redisVersion(): Promise<string> {
    return this.redis!.version();
  }

  async stop(): Promise<void> {
    await this.pool?.stop().catch(() => undefined);
    await this.app?.stop().catch(() => undefined);
    await this.redis?.stop();
    this.redis = undefined;
  }

  killNow(): void {
    this.pool?.killNow();
    this.app?.killNow();
    this.redis?.killNow();
  }

  /** Runs one library in one scenario for one round, turning failures into a recorded status. */
  private async runOne(scenario: BenchScenario, adapter: LockAdapter, round: number, body: () => Promise<RunOutcome>): Promise<void> {
    const known = this.couldNotRun.get(adapter.id);
    if (known) {
      this.record(scenario, adapter.id, { round, status: 'could-not-run', reason: known });
      return;
    }
    await this.admin!.flushdb();
    let run: RoundRun;
    try {
      const outcome = await body();
      run = { round, status: 'ok', metrics: outcome.metrics, errors: outcome.errors };
    } catch (error) {
      if (error instanceof CouldNotRun) {
        this.couldNotRun.set(adapter.id, error.message);
        run = { round, status: 'could-not-run', reason: error.message };
      } else {
        run = { round, status: 'failed', reason: describeError(error) };
        if (scenario === 'contended' || scenario === 'semaphore') {
          // A stuck or crashed worker: start the pool afresh for the next runs.
          await this.pool!.stop();
          this.pool!.start();
        }
      }
    }
    this.record(scenario, adapter.id, run);
    console.log(formatRun(scenario, adapter.id, run));
  }

  private async session<T>(adapter: LockAdapter, fn: (session: Awaited<ReturnType<LockAdapter['open']>>) => Promise<T>): Promise<T> {
    const session = await adapter.open(this.target);
    try {
      return await fn(session);
    } finally {
      await session.close();
    }
  }

  async round(round: number): Promise<void> {
    const o = this.options;
    const label = `${this.server.id}, round ${round}/${o.rounds}`;
    if (o.scenarios.includes('serial')) {
      console.log(`\n[${label}] serial`);
      for (const adapter of this.adapters('serial')) {
        await this.runOne('serial', adapter, round, () => this.session(adapter, (s) => runSerial(s, `bench:serial:${adapter.id}`, o.serialMs, o.serialWarmup)));
      }
    }
    if (o.scenarios.includes('parallel')) {
      console.log(`\n[${label}] parallel`);
      for (const adapter of this.adapters('parallel')) {
        await this.runOne('parallel', adapter, round, () =>
          this.session(adapter, (s) => runParallel(s, `bench:parallel:${adapter.id}`, o.parallelCallers, o.parallelMs, o.parallelWarmupMs)),
        );
      }
    }
    if (o.scenarios.includes('contended')) {
      console.log(`\n[${label}] contended`);
      for (const adapter of this.adapters('contended')) {
        await this.runOne('contended', adapter, round, () =>
          this.pool!.run(
            adapter.id,
            this.target,
            this.admin!,
            { lock: `bench:contended:${adapter.id}`, counter: `bench:counter:${adapter.id}` },
            o.contendedCallers,
            o.contendedMs,
            o.contendedGraceMs,
          ),
        );
      }
    }
    if (o.scenarios.includes('semaphore')) {
      console.log(`\n[${label}] semaphore`);
      for (const adapter of this.adapters('semaphore')) {
        await this.runOne('semaphore', adapter, round, () =>
          this.pool!.run(
            adapter.id,
            this.target,
            this.admin!,
            { lock: `bench:semaphore:${adapter.id}`, counter: `bench:in-use:${adapter.id}` },
            o.contendedCallers,
            o.contendedMs,
            o.contendedGraceMs,
            {
              kind: 'permits',
              permits: SEMAPHORE_PERMITS,
            },
          ),
        );
      }
    }
    if (o.scenarios.includes('decorator')) {
      console.log(`\n[${label}] decorator`);
      if (round === 1) for (const route of DECORATOR_ROUTES) await this.app!.load(route, o.decoratorWarmupMs);
      const outcomes = new Map<DecoratorRoute, RoundRun>();
      for (const route of DECORATOR_ROUTES) {
        await this.admin!.flushdb();
        let run: RoundRun;
        try {
          const outcome = await this.app!.load(route, o.decoratorMs);
          run = { round, status: 'ok', metrics: outcome.metrics, errors: outcome.errors };
        } catch (error) {
          run = { round, status: 'failed', reason: describeError(error) };
        }
        outcomes.set(route, run);
      }
      const plain = outcomes.get('plain')!.metrics?.p50Ms;
      const roundTrips = this.runs.get('serial/raw')?.find((r) => r.round === round)?.metrics?.p50Ms;
      for (const route of DECORATOR_ROUTES) {
        const run = outcomes.get(route)!;
        if (route !== 'plain' && run.metrics && plain !== undefined) {
          run.metrics.addedP50Ms = run.metrics.p50Ms! - plain;
          if (roundTrips !== undefined) {
            run.metrics.roundTripsMs = roundTrips;
            run.metrics.addedBeyondRoundTripsMs = run.metrics.addedP50Ms - roundTrips;
          }
        }
        this.record('decorator', route, run);
        console.log(formatRun('decorator', route, run));
      }
    }
  }

  results(): ScenarioResult[] {
    return this.options.scenarios.map((scenario) => {
      const ids =
        scenario === 'decorator'
          ? DECORATOR_ROUTES.map((route) => ({
              id: route,
              label: { plain: 'without lock', locked: '@DistributedLock, 10 s lease', watchdog: '@DistributedLock, watchdog' }[route],
              family: false,
            }))
          : this.adapters(scenario).map((a) => ({ id: a.id, label: a.label, family: a.family ?? false }));
      return {
        scenario,
        title: DESCRIPTIONS[scenario].title,
        description: DESCRIPTIONS[scenario].description(this.options),
        rows: ids.map(({ id, label, family }) => makeRow(id, label, family, this.runs.get(`${scenario}/${id}`) ?? [])),
      };
    });
  }
}
