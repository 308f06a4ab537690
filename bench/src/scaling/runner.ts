import { Redis } from 'ioredis';
import { adapterById, CouldNotRun, type LockAdapter, type RedisTarget } from '../adapters/index.js';
import type { BenchOptions } from '../options.js';
import { makeRow, type RoundRun } from '../results.js';
import { ContendedPool } from '../scenarios/contended.js';
import { describeError, type RunOutcome } from '../scenarios/scenario.js';
import { runCallers } from './callers.js';
import { SCALING_LIBRARIES, scalingSettings, type ScalingCurve, type ScalingSettings } from './curves.js';
import { holderFor } from './holders.js';
import { BenchServer } from '../bench-server.js';
import { ADMIN_NAME } from './protocol.js';
import { redisDelta, redisSnapshot } from './redis-probe.js';
import { seriesStatus, type CurveResult } from './results.js';
import { curveSpec, type CurvePoint } from './specs.js';
import { killWorkers, runInWorker } from './worker-runner.js';

/** Libraries on each curve when --only is not given: the baseline where it has something to show, ours and the best two peers. */
const DEFAULT_LIBRARIES: Record<ScalingCurve, string[]> = {
  callers: SCALING_LIBRARIES,
  processes: SCALING_LIBRARIES,
  // The baseline neither renews nor waits any differently from redis-semaphore (SET NX PX every 10 ms).
  watchdog: SCALING_LIBRARIES.filter((id) => id !== 'raw'),
  waiting: SCALING_LIBRARIES.filter((id) => id !== 'raw'),
  memory: SCALING_LIBRARIES,
};

/** A worker that has not answered after this long is stuck (100 000 locks take ~15 s to acquire on a busy 2-vCPU VM). */
const WORKER_TIMEOUT_MS = 300_000;

/** Why a library cannot take part in a curve, or undefined if it can. */
function unsupported(curve: ScalingCurve, adapter: LockAdapter): string | undefined {
  if (curve === 'callers' && !adapter.scenarios.includes('parallel')) return 'not in the parallel scenario';
  if (curve === 'processes' && !adapter.scenarios.includes('contended')) return 'not in the contended scenario';
  const holder = holderFor(adapter.id);
  if (curve === 'watchdog' && !holder?.renewal)
    return holder ? 'it has no renewal of its own (the baseline)' : 'no renewing hold written for it in bench/src/scaling/holders.ts';
  if ((curve === 'waiting' || curve === 'memory') && !holder) return 'no hold written for it in bench/src/scaling/holders.ts';
  return undefined;
}

/** The scaling set: starts its own redis-server, runs every curve for every library, round after round. */
export class ScalingBench {
  readonly settings: ScalingSettings;
  private redis: BenchServer | undefined;
  private pool: ContendedPool | undefined;
  private readonly runs = new Map<string, RoundRun[]>();
  private readonly couldNotRun = new Map<string, string>();

  constructor(private readonly options: BenchOptions) {
    this.settings = scalingSettings(options.short);
  }

  libraries(curve: ScalingCurve): LockAdapter[] {
    const ids = this.options.onlyGiven ? this.options.libraries : DEFAULT_LIBRARIES[curve];
    return ids.map(adapterById);
  }

  private get admin(): Redis | undefined {
    return this.redis?.admin;
  }

  private get target(): RedisTarget {
    return this.redis!.target;
  }

  async start(): Promise<void> {
    this.redis = await BenchServer.start(ADMIN_NAME);
    if (this.options.curves.includes('processes')) {
      this.pool = new ContendedPool(Math.max(...this.settings.processes.points));
      this.pool.start();
    }
  }

  redisVersion(): Promise<string> {
    return this.redis!.version();
  }

  async stop(): Promise<void> {
    killWorkers();
    await this.pool?.stop().catch(() => undefined);
    await this.redis?.stop();
    this.redis = undefined;
  }

  killNow(): void {
    killWorkers();
    this.pool?.killNow();
    this.redis?.killNow();
  }

  async round(round: number): Promise<void> {
    for (const curve of this.options.curves) {
      console.log(`\n[round ${round}/${this.options.rounds}] scaling: ${curve}`);
      for (const point of curveSpec(curve, this.settings).points) {
        for (const adapter of this.libraries(curve)) await this.runOne(curve, point, adapter, round);
      }
    }
  }

  private async runOne(curve: ScalingCurve, point: CurvePoint, adapter: LockAdapter, round: number): Promise<void> {
    const key = `${curve}/${point.label}/${adapter.id}`;
    const known = unsupported(curve, adapter) ?? this.couldNotRun.get(`${curve}/${adapter.id}`);
    let run: RoundRun;
    if (known) {
      run = { round, status: 'could-not-run', reason: known };
    } else {
      await this.admin!.flushdb();
      try {
        const outcome = await this.measure(curve, point, adapter);
        run = { round, status: 'ok', metrics: outcome.metrics, errors: outcome.errors };
      } catch (error) {
        if (error instanceof CouldNotRun) {
          this.couldNotRun.set(`${curve}/${adapter.id}`, error.message);
          run = { round, status: 'could-not-run', reason: error.message };
        } else {
          run = { round, status: 'failed', reason: describeError(error) };
          if (curve === 'processes') {
            await this.pool!.stop();
            this.pool!.start();
          }
        }
      }
    }
    if (!this.runs.has(key)) this.runs.set(key, []);
    this.runs.get(key)!.push(run);
    if (run.status !== 'could-not-run' || round === 1) console.log(`  ${point.label.padStart(15)}  ${adapter.id.padEnd(16)} ${progress(curve, run)}`);
  }

  private async measure(curve: ScalingCurve, point: CurvePoint, adapter: LockAdapter): Promise<RunOutcome> {
    const s = this.settings;
    const { target } = this;
    const p = point.params;
    switch (curve) {
      case 'callers': {
        const session = await adapter.open(target);
        try {
          return await runCallers(session, this.admin!, `bench:callers:${adapter.id}`, p.callers!, s.callers.durationMs, s.callers.warmupMs);
        } finally {
          await session.close();
        }
      }
      case 'processes': {
        const from = await redisSnapshot(this.admin!);
        const keys = { lock: `bench:processes:${adapter.id}`, counter: `bench:processes-counter:${adapter.id}` };
        const outcome = await this.pool!.run(
          adapter.id,
          target,
          this.admin!,
          keys,
          s.processes.callersPerProcess,
          s.processes.durationMs,
          s.processes.graceMs,
          undefined,
          p.processes,
        );
        const redis = redisDelta(from, await redisSnapshot(this.admin!));
        const sections = outcome.metrics.sections ?? 0;
        outcome.metrics.redisCpuUsPerSection = sections ? (redis.cpuMs * 1000) / sections : NaN;
        return outcome;
      }
      case 'watchdog':
        return runInWorker(
          {
            kind: 'watchdog',
            library: adapter.id,
            target,
            locks: p.locks!,
            periodMs: s.watchdog.periodMs(p.locks!),
            windowMs: s.watchdog.windowMs(p.locks!),
            idleMs: s.watchdog.idleMs,
          },
          WORKER_TIMEOUT_MS,
        );
      case 'waiting': {
        const w = s.waiting;
        return runInWorker(
          {
            kind: 'waiting',
            library: adapter.id,
            target,
            waiters: p.waiters!,
            names: p.names!,
            settleMs: w.settleMs(p.waiters!),
            windowMs: w.windowMs,
            firstReleases: w.firstReleases,
            chainReleases: w.chainReleases,
            phaseCapMs: w.phaseCapMs,
            entryTimeoutMs: w.entryTimeoutMs,
          },
          WORKER_TIMEOUT_MS,
        );
      }
      case 'memory':
        return runInWorker({ kind: 'memory', library: adapter.id, target, locks: p.locks! }, WORKER_TIMEOUT_MS);
    }
  }

  results(): CurveResult[] {
    return this.options.curves.map((curve) => {
      const spec = curveSpec(curve, this.settings);
      return {
        curve,
        ...spec,
        series: this.libraries(curve).map((adapter) => {
          const points = spec.points.map((point) => ({
            point: point.label,
            ...makeRow(adapter.id, adapter.label, false, this.runs.get(`${curve}/${point.label}/${adapter.id}`) ?? []),
          }));
          return { id: adapter.id, label: adapter.label, ...seriesStatus(points), points };
        }),
      };
    });
  }
}

const n0 = (v: number | undefined): string => (v === undefined || Number.isNaN(v) ? '-' : Math.round(v).toLocaleString('en-US'));
const n2 = (v: number | undefined): string => (v === undefined || Number.isNaN(v) ? '-' : v.toFixed(2));

/** One line per finished run, for progress. */
function progress(curve: ScalingCurve, run: RoundRun): string {
  if (run.status !== 'ok') return `${run.status}: ${run.reason}`;
  const m = run.metrics!;
  const errors = run.errors?.errors ? `  errors ${run.errors.errors} (${run.errors.firstError})` : '';
  switch (curve) {
    case 'callers':
      return `${n0(m.cyclesPerSec)} cycles/s  p99 ${n2(m.p99Ms)} ms  client CPU ${n0(m.clientCpuPercent)} %  Redis CPU ${n0(m.redisCpuPercent)} %${errors}`;
    case 'processes':
      return `${n0(m.sectionsPerSec)} sections/s  wait p99 ${n2(m.p99WaitMs)} ms  busiest ${n0(m.busiestProcessPercent)} %  lost ${m.lostUpdates}${errors}`;
    case 'watchdog':
      return `round ${n2(m.roundMs)} ms  ${n0(m.renewalsPerSec)} renewals/s  Redis ${n2(m.redisCpuMsPerSec)} ms/s  client ${n2(m.clientCpuMsPerSec)} ms/s  heap ${n0(m.heapBytesPerLock)} B/lock  acquire ${n0(m.acquireMs)} ms${errors}`;
    case 'waiting':
      return `subs ${m.subscriptions}  heap ${n0(m.heapBytesPerWaiter)} B/waiter  Redis ${n2(m.redisCpuMsPerSec)} ms/s ${n0(m.redisCommandsPerSec)} cmd/s  entry ${n2(m.firstEntryP50Ms)} / queue ${n2(m.chainEntryP50Ms)} ms${m.unfinishedEntries ? `  unfinished ${m.unfinishedEntries}` : ''}${errors}`;
    case 'memory':
      return `Redis ${n0(m.redisBytesPerHeldLock)} B/held lock  ${n0(m.redisBytesPerNameLeft)} B left/name  heap ${n0(m.heapBytesPerHeldLock)} B/lock${errors}`;
  }
}
