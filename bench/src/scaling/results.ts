import type { Row, RunHeader } from '../results.js';
import type { ScalingCurve } from './curves.js';
import type { CurvePoint, MetricSpec } from './specs.js';

/** One library along one curve: a row (runs over the rounds, median and spread) per point. */
export interface CurveSeries {
  id: string;
  label: string;
  /** ok, or why the library has no figures on this curve. */
  status: 'ok' | 'could-not-run' | 'failed';
  reason?: string;
  points: (Row & { point: string })[];
}

export interface CurveResult {
  curve: ScalingCurve;
  title: string;
  description: string;
  xLabel: string;
  points: CurvePoint[];
  metrics: MetricSpec[];
  series: CurveSeries[];
}

export interface ScalingLibrary {
  id: string;
  label: string;
  packageName: string;
  version: string;
  /** How the library renews a held lock, as measured by the watchdog curve. */
  renewal?: string;
}

export interface ScalingReport extends RunHeader {
  kind: 'scaling';
  libraries: ScalingLibrary[];
  curves: CurveResult[];
  /** Lost updates, errors or failed runs of the baseline or of our library (the run exits non-zero). */
  failures: string[];
  /** The same for peers, and rows that could not run. */
  notes: string[];
}

export function seriesStatus(points: Row[]): Pick<CurveSeries, 'status' | 'reason'> {
  if (points.length > 0 && points.every((row) => row.status === 'could-not-run')) return { status: 'could-not-run', reason: points[0]!.reason };
  const failed = points.find((row) => row.status === 'failed');
  return failed ? { status: 'failed', reason: failed.reason } : { status: 'ok' };
}

/** Failures (ours, raw) and notes (peers), as in the main benchmark. */
export function scalingProblems(curves: CurveResult[], mustBeCorrect: ReadonlySet<string>): { failures: string[]; notes: string[] } {
  const failures: string[] = [];
  const notes: string[] = [];
  for (const curve of curves) {
    for (const series of curve.series) {
      const list = mustBeCorrect.has(series.id) ? failures : notes;
      if (series.status === 'could-not-run') {
        notes.push(`${curve.curve} / ${series.id}: not measured: ${series.reason}`);
        continue;
      }
      for (const row of series.points) {
        const where = `${curve.curve} / ${series.id} / ${row.point}`;
        if (row.status === 'failed') list.push(`${where}: ${row.reason}`);
        for (const run of row.runs) {
          const lost = run.metrics?.lostUpdates ?? 0;
          if (lost !== 0) list.push(`${where}: round ${run.round} lost ${lost} of ${run.metrics!.sections} updates`);
          if (run.errors?.errors) list.push(`${where}: round ${run.round} had ${run.errors.errors} errors (${run.errors.firstError})`);
          const unfinished = (run.metrics?.unfinishedEntries ?? 0) + (run.metrics?.unfinishedWaits ?? 0);
          if (unfinished) list.push(`${where}: round ${run.round}: ${unfinished} waits never ended`);
          if (run.metrics?.earlyEntries) list.push(`${where}: round ${run.round}: ${run.metrics.earlyEntries} waiters got in before the holder released`);
          if (run.metrics?.tokenIncreasesAfterCounterLoss === 0)
            list.push(`${where}: round ${run.round}: a token drawn after its counter was deleted was not above the last one`);
        }
      }
    }
  }
  return { failures, notes };
}
