import { ADAPTERS, PEER_IDS } from './adapters/index.js';
import type { MachineInfo } from './machine.js';
import type { BenchScenario } from './options.js';
import type { Metrics, RunErrors } from './scenarios/scenario.js';
import { spread, type Spread } from './stats.js';

export type RunStatus = 'ok' | 'could-not-run' | 'failed';

/** One run: one library (or route), one scenario, one round. */
export interface RoundRun {
  round: number;
  status: RunStatus;
  reason?: string;
  metrics?: Metrics;
  errors?: RunErrors;
}

export interface Row {
  id: string;
  label: string;
  family: boolean;
  /** ok: every round ran; could-not-run / failed: see reason (failed: at least one round failed). */
  status: RunStatus;
  reason?: string;
  runs: RoundRun[];
  /** Median and spread (min-max) over the rounds that ran, per metric. */
  summary: Record<string, Spread>;
}

export interface ScenarioResult {
  scenario: BenchScenario;
  title: string;
  description: string;
  rows: Row[];
}

export interface Target {
  id: string;
  description: string;
  goal: string;
  measured: string;
  /** null: could not be judged (a row is missing). */
  met: boolean | null;
}

/** One metric of our semaphore row against a peer's semaphore row: medians and their ratio. */
export interface Comparison {
  scenario: BenchScenario;
  metric: string;
  description: string;
  ours: { id: string; median: number } | null;
  peer: { id: string; median: number } | null;
  /** ours / peer; below 1 is better for `lower` metrics (latency, wait), above 1 for rates. */
  ratio: number | null;
  better: 'higher' | 'lower';
}

export interface LibrarySettings {
  id: string;
  label: string;
  packageName: string;
  version: string;
  family: boolean;
  scenarios: string[];
  settings: Record<string, string | number | boolean>;
}

/** What every report of a run (the comparison, the scaling set) starts with: when, how, where. */
export interface RunHeader {
  /** 1: the scaling set, and the comparison before it ran on several servers; 2: the comparison with `servers`. */
  schema: 1 | 2;
  startedAt: string;
  finishedAt: string;
  command: string;
  short: boolean;
  rounds: number;
  machine: MachineInfo;
  method: Record<string, string | number>;
}

/** Every scenario of the comparison on one server, and the ratios judged within that server's run. */
export interface ServerResult {
  /** The server's id (`--servers`: redis, valkey-9...). */
  id: string;
  /** Its product and version, 'Redis 7.0.15', 'Valkey 9.1.2'. */
  version: string;
  scenarios: ScenarioResult[];
  targets: Target[];
  /** Our semaphore against each peer semaphore, side by side from this server's run (see compareSemaphores). */
  comparisons: Comparison[];
}

export interface BenchReport extends RunHeader {
  libraries: LibrarySettings[];
  /** One result per server, in the order they ran (all rounds on one server, then the next). */
  servers: ServerResult[];
  /** What fails the run: lost updates, errors or failed runs of the baseline or of our locks (on any server). */
  failures: string[];
  /** The same for peers, reported as data; rows that could not run. */
  notes: string[];
}

/** Builds a row from its runs: summary over the rounds that ran; status from the worst run. */
export function makeRow(id: string, label: string, family: boolean, runs: RoundRun[]): Row {
  const ran = runs.filter((run) => run.status === 'ok' && run.metrics);
  const metricNames = [...new Set(ran.flatMap((run) => Object.keys(run.metrics!)))];
  const summary: Record<string, Spread> = {};
  for (const name of metricNames) summary[name] = spread(ran.map((run) => run.metrics![name]!));
  const notRun = runs.find((run) => run.status === 'could-not-run');
  const failed = runs.find((run) => run.status === 'failed');
  const row: Row = { id, label, family, status: 'ok', runs, summary };
  if (notRun && ran.length === 0) {
    row.status = 'could-not-run';
    row.reason = notRun.reason;
  } else if (failed) {
    row.status = 'failed';
    row.reason = `round ${failed.round}: ${failed.reason}`;
  }
  return row;
}

function row(report: Pick<ServerResult, 'scenarios'>, scenario: BenchScenario, id: string): Row | undefined {
  const found = report.scenarios.find((s) => s.scenario === scenario)?.rows.find((r) => r.id === id);
  return found && found.status !== 'could-not-run' && found.summary[Object.keys(found.summary)[0] ?? ''] ? found : undefined;
}

function med(r: Row | undefined, metric: string): number | undefined {
  const value = r?.summary[metric]?.median;
  return value === undefined || Number.isNaN(value) ? undefined : value;
}

/** The best peer on a metric (highest, or lowest with `lower`), among peers that ran. */
function bestPeer(report: Pick<ServerResult, 'scenarios'>, scenario: BenchScenario, metric: string, lower = false): { id: string; value: number } | undefined {
  let best: { id: string; value: number } | undefined;
  for (const id of PEER_IDS) {
    const value = med(row(report, scenario, id), metric);
    if (value === undefined) continue;
    if (!best || (lower ? value < best.value : value > best.value)) best = { id, value };
  }
  return best;
}

const f = (value: number, digits = 2): string => value.toFixed(digits);

/** The targets, judged on medians from this one run. */
export function judgeTargets(report: Pick<ServerResult, 'scenarios'>): Target[] {
  const targets: Target[] = [];
  const ours = (scenario: BenchScenario, metric: string): number | undefined => med(row(report, scenario, 'ours'), metric);

  const contended = ours('contended', 'sectionsPerSec');
  const contendedPeer = bestPeer(report, 'contended', 'sectionsPerSec');
  targets.push({
    id: 'contended-throughput',
    description: 'Contended sections/s at least 1.5x the best peer',
    goal: '>= 1.50x',
    measured:
      contended !== undefined && contendedPeer
        ? `${f(contended / contendedPeer.value)}x (${f(contended, 0)} vs ${contendedPeer.id} ${f(contendedPeer.value, 0)} sections/s)`
        : 'n/a',
    met: contended !== undefined && contendedPeer ? contended >= 1.5 * contendedPeer.value : null,
  });

  const p99 = ours('contended', 'p99WaitMs');
  const p99Peer = bestPeer(report, 'contended', 'p99WaitMs', true);
  targets.push({
    id: 'contended-p99-wait',
    description: "Contended p99 wait at most 1/5 of the best peer's",
    goal: '<= 0.20x',
    measured: p99 !== undefined && p99Peer ? `${f(p99 / p99Peer.value)}x (${f(p99, 1)} ms vs ${p99Peer.id} ${f(p99Peer.value, 1)} ms)` : 'n/a',
    met: p99 !== undefined && p99Peer ? p99 <= p99Peer.value / 5 : null,
  });

  const serial = ours('serial', 'p50Ms');
  const raw = med(row(report, 'serial', 'raw'), 'p50Ms');
  targets.push({
    id: 'serial-p50',
    description: 'Serial p50 latency of acquire + release at most 1.15x the raw baseline',
    goal: '<= 1.15x raw',
    measured: serial !== undefined && raw !== undefined ? `${f(serial / raw)}x (${f(serial, 3)} vs raw ${f(raw, 3)} ms)` : 'n/a',
    met: serial !== undefined && raw !== undefined ? serial <= raw * 1.15 : null,
  });

  const serialP99 = ours('serial', 'p99Ms');
  const rawP99 = med(row(report, 'serial', 'raw'), 'p99Ms');
  targets.push({
    id: 'serial-p99',
    description: 'Serial p99 latency at most 1.5x the raw baseline',
    goal: '<= 1.50x raw',
    measured: serialP99 !== undefined && rawP99 !== undefined ? `${f(serialP99 / rawP99)}x (${f(serialP99, 3)} vs raw ${f(rawP99, 3)} ms)` : 'n/a',
    met: serialP99 !== undefined && rawP99 !== undefined ? serialP99 <= rawP99 * 1.5 : null,
  });

  const parallel = ours('parallel', 'cyclesPerSec');
  const parallelPeer = bestPeer(report, 'parallel', 'cyclesPerSec');
  const parallelRaw = med(row(report, 'parallel', 'raw'), 'cyclesPerSec');
  targets.push({
    id: 'parallel-throughput',
    description: 'Parallel cycles/s at least the best peer (aim 1.5x)',
    goal: '>= 1.00x',
    measured:
      parallel !== undefined && parallelPeer
        ? `${f(parallel / parallelPeer.value)}x (${f(parallel, 0)} vs ${parallelPeer.id} ${f(parallelPeer.value, 0)} cycles/s)` +
          (parallelRaw ? `; ${f((parallel / parallelRaw) * 100, 0)} % of raw` : '')
        : 'n/a',
    met: parallel !== undefined && parallelPeer ? parallel >= parallelPeer.value : null,
  });

  // The wording: under 0.5 ms added per request on top of the lock's own two round trips.
  const added = med(row(report, 'decorator', 'locked'), 'addedP50Ms');
  const beyond = med(row(report, 'decorator', 'locked'), 'addedBeyondRoundTripsMs');
  targets.push({
    id: 'decorator-overhead',
    description: "@DistributedLock adds less than 0.5 ms to a request's p50 on top of the lock's two round trips",
    goal: '< 0.500 ms',
    measured: beyond !== undefined ? `${f(beyond, 3)} ms beyond the two round trips (${f(added ?? NaN, 3)} ms added in total)` : 'n/a',
    met: beyond !== undefined ? beyond < 0.5 : null,
  });
  return targets;
}

/** The semaphore rows: ours, and the peers' (e.g. redis-semaphore's Semaphore). */
const OUR_SEMAPHORE = 'ours-semaphore';
const PEER_SEMAPHORES = ADAPTERS.filter((a) => a.primitive === 'semaphore' && a.packageName !== 'nestjs-distributed-lock').map((a) => a.id);

/** Our semaphore against each peer semaphore on the headline metrics, as ratios of medians from this one run. */
export function compareSemaphores(report: Pick<ServerResult, 'scenarios'>): Comparison[] {
  const metrics: { scenario: BenchScenario; metric: string; description: string; better: 'higher' | 'lower' }[] = [
    { scenario: 'serial', metric: 'p50Ms', description: 'serial: p50 of acquire + release (one permit of a new semaphore)', better: 'lower' },
    { scenario: 'serial', metric: 'cyclesPerSec', description: 'serial: cycles/s', better: 'higher' },
    { scenario: 'parallel', metric: 'cyclesPerSec', description: 'parallel: cycles/s, 100 callers', better: 'higher' },
    { scenario: 'semaphore', metric: 'sectionsPerSec', description: 'one semaphore, several processes: sections/s', better: 'higher' },
    { scenario: 'semaphore', metric: 'p50WaitMs', description: 'one semaphore, several processes: p50 wait', better: 'lower' },
    { scenario: 'semaphore', metric: 'p99WaitMs', description: 'one semaphore, several processes: p99 wait', better: 'lower' },
  ];
  const comparisons: Comparison[] = [];
  for (const peerId of PEER_SEMAPHORES) {
    for (const { scenario, metric, description, better } of metrics) {
      if (!report.scenarios.some((s) => s.scenario === scenario)) continue;
      const ours = med(row(report, scenario, OUR_SEMAPHORE), metric);
      const peer = med(row(report, scenario, peerId), metric);
      comparisons.push({
        scenario,
        metric,
        description,
        ours: ours === undefined ? null : { id: OUR_SEMAPHORE, median: ours },
        peer: peer === undefined ? null : { id: peerId, median: peer },
        ratio: ours !== undefined && peer ? ours / peer : null,
        better,
      });
    }
  }
  return comparisons;
}

/**
 * Lost updates and errors are reported, never hidden. For the rows that must be correct (the
 * baseline and our locks) they fail the run; for peers they are data (notes).
 */
export function findProblems(report: Pick<ServerResult, 'scenarios'>, mustBeCorrect: ReadonlySet<string>): { failures: string[]; notes: string[] } {
  const failures: string[] = [];
  const notes: string[] = [];
  for (const scenario of report.scenarios) {
    for (const r of scenario.rows) {
      const list = scenario.scenario !== 'decorator' && !mustBeCorrect.has(r.id) ? notes : failures;
      if (r.status === 'failed') list.push(`${scenario.scenario} / ${r.id}: ${r.reason}`);
      if (r.status === 'could-not-run') (r.family || list === notes ? notes : failures).push(`${scenario.scenario} / ${r.id}: could not run: ${r.reason}`);
      for (const run of r.runs) {
        const lost = run.metrics?.lostUpdates ?? 0;
        if (lost !== 0) list.push(`${scenario.scenario} / ${r.id}: round ${run.round} lost ${lost} of ${run.metrics!.sections} updates`);
        const over = run.metrics?.overPermits ?? 0;
        if (over !== 0)
          list.push(
            `${scenario.scenario} / ${r.id}: round ${run.round}: ${over} sections saw more than ${run.metrics!.permits} permits in use (max ${run.metrics!.maxInUse})`,
          );
        if (run.errors?.errors) list.push(`${scenario.scenario} / ${r.id}: round ${run.round} had ${run.errors.errors} errors (${run.errors.firstError})`);
      }
    }
  }
  return { failures, notes };
}
