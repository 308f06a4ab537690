/**
 * `npm run bench`: this library against its peers on one throwaway redis-server, in one run.
 *
 *   npm run bench                          # 3 rounds of every scenario, every library
 *   npm run bench -- --short               # a few seconds per scenario, one round (CI)
 *   npm run bench -- --rounds 5 --only raw,ours,redis-semaphore --scenarios serial,contended --out results/bench
 *   npm run bench -- --scenarios scaling     # the cost curves (not run by default): scaling.{json,md}, scaling-*.svg
 *
 * Rounds interleave the libraries (A B C ... A B C ...), so slow drifts of a shared host hit all of
 * them alike; tables show the median over rounds and the spread (min-max). Writes latest.json,
 * latest.md and latest.svg to --out. Exits non-zero if a correct lock lost an update or a run failed.
 */
import { Redis } from 'ioredis';
import { ADAPTERS, adapterById, CouldNotRun, LEASE_MS, SEMAPHORE_PERMITS, type LockAdapter, type RedisTarget } from './adapters/index.js';
import { cpuTimes, machineInfo, stealPercent } from './machine.js';
import { parseOptions, USAGE, type BenchOptions, type BenchScenario } from './options.js';
import { BenchServer } from './bench-server.js';
import { concludeRun, stopOnInterrupt } from './run-lifecycle.js';
import { installedVersion } from './paths.js';
import { consoleReport, formatRun, writeReport } from './report.js';
import { runScaling } from './scaling/run-scaling.js';
import { compareSemaphores, findProblems, judgeTargets, makeRow, type BenchReport, type RoundRun, type ScenarioResult } from './results.js';
import { ContendedPool } from './scenarios/contended.js';
import { DECORATOR_LOAD, DECORATOR_ROUTES, DecoratorApp, type DecoratorRoute } from './scenarios/decorator.js';
import { runParallel } from './scenarios/parallel.js';
import { describeError, type RunOutcome } from './scenarios/scenario.js';
import { runSerial } from './scenarios/serial.js';

/** Rows that must run without a lost update, an error or a failure: the baseline and our locks. */
const MUST_BE_CORRECT: ReadonlySet<string> = new Set(ADAPTERS.filter((a) => !a.packageName || a.packageName === 'nestjs-distributed-lock').map((a) => a.id));

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

function commandLine(argv: string[]): string {
  const args = argv.join(' ');
  return process.env.npm_lifecycle_event === 'bench' ? `npm run bench${args ? ` -- ${args}` : ''}` : `node dist/bench/main.js${args ? ` ${args}` : ''}`;
}

class Bench {
  private redis: BenchServer | undefined;
  private pool: ContendedPool | undefined;
  private app: DecoratorApp | undefined;
  private readonly runs = new Map<string, RoundRun[]>();
  /** Rows known not to run here: skipped after their first attempt, with the reason. */
  private readonly couldNotRun = new Map<string, string>();

  constructor(private readonly options: BenchOptions) {}

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
    this.redis = await BenchServer.start();
    console.log(`redis-server ${await this.redisVersion()} started on ${this.target.host}:${this.target.port}`);
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
    const label = `round ${round}/${o.rounds}`;
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

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const options = parseOptions(argv);
  if (options === 'help') {
    console.log(USAGE);
    return 0;
  }
  let code = 0;
  if (options.scenarios.length > 0) code = await runComparison(options, argv);
  if (options.curves.length > 0) code = Math.max(code, await runScaling(options, commandLine(argv)));
  return code;
}

/** The comparison scenarios (serial, parallel, contended, decorator): latest.{json,md,svg}. */
async function runComparison(options: BenchOptions, argv: string[]): Promise<number> {
  const startedAt = new Date().toISOString();
  const cpuAtStart = cpuTimes();
  const bench = new Bench(options);
  const ignoreInterrupts = stopOnInterrupt(bench, 'this benchmark');

  try {
    await bench.start();
    const machine = machineInfo(await bench.redisVersion());
    console.log(`libraries: ${options.libraries.join(', ')}; ${options.rounds} round(s); scenarios: ${options.scenarios.join(', ')}`);
    for (let round = 1; round <= options.rounds; round++) await bench.round(round);
    machine.stealPercent = stealPercent(cpuAtStart, cpuTimes());

    const scenarios = bench.results();
    const report: BenchReport = {
      schema: 1,
      startedAt,
      finishedAt: new Date().toISOString(),
      command: commandLine(argv),
      short: options.short,
      rounds: options.rounds,
      machine,
      method: {
        leaseMs: LEASE_MS,
        rounds: 'interleaved: every round runs every library in turn (A B C ... A B C ...); tables show the median over rounds and the min-max spread',
        redis: 'one redis-server started for the run on a free 127.0.0.1 port (no persistence), FLUSHDB before every run',
        sessions: 'each run opens the library afresh (its own connections) and closes it afterwards; connecting is not timed',
        serialMs: options.serialMs,
        parallelMs: options.parallelMs,
        parallelCallers: options.parallelCallers,
        contendedMs: options.contendedMs,
        contendedProcesses: options.contendedProcesses,
        contendedCallersPerProcess: options.contendedCallers,
        contendedGraceMs: options.contendedGraceMs,
        decoratorMs: options.decoratorMs,
        decoratorConnections: DECORATOR_LOAD.connections,
      },
      libraries: options.libraries.map(adapterById).map((a) => ({
        id: a.id,
        label: a.label,
        packageName: a.packageName,
        version: a.packageName ? installedVersion(a.packageName) : '',
        family: a.family ?? false,
        scenarios: [...a.scenarios],
        settings: a.settings,
      })),
      scenarios,
      targets: [],
      comparisons: [],
      failures: [],
      notes: [],
    };
    report.targets = judgeTargets(report);
    report.comparisons = compareSemaphores(report);
    Object.assign(report, findProblems(report, MUST_BE_CORRECT));
    return concludeRun(consoleReport(report), writeReport(options.out, report), report.failures);
  } finally {
    ignoreInterrupts();
    await bench.stop();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`bench failed: ${(error as Error).stack ?? String(error)}`);
    process.exitCode = 1;
  },
);
