import type { RunResult } from './experiments.js';
import { boundLabel, compactHistogram, percentileBound, type Histogram } from './lock-metrics.js';

const withMetrics = (runs: RunResult[], experiment: number): (RunResult & { lockMetrics: NonNullable<RunResult['lockMetrics']> })[] =>
  runs.filter(
    (run): run is RunResult & { lockMetrics: NonNullable<RunResult['lockMetrics']> } => run.experiment === experiment && run.lockMetrics !== undefined,
  );

/** Console lines: per protected endpoint, wait and hold percentiles and their non-empty buckets. */
export function lockMetricsConsole(runs: RunResult[], experiment: number): string[] {
  const rows = withMetrics(runs, experiment);
  if (rows.length === 0) return [];
  const width = Math.max(...rows.map((run) => run.endpoint.length));
  return [
    `Lock wait and hold per purchase, from the apps' GET /metrics (OpenTelemetry histograms; pNN = the bucket it falls in):`,
    ...rows.flatMap(({ endpoint, lockMetrics: { wait, hold } }) => [
      `  ${endpoint.padEnd(width)}  wait p50 ${percentileBound(wait, 50)}, p99 ${percentileBound(wait, 99)} (${wait.count}): ${compactHistogram(wait)}`,
      `  ${''.padEnd(width)}  hold p50 ${percentileBound(hold, 50)}, p99 ${percentileBound(hold, 99)} (${hold.count}): ${compactHistogram(hold)}`,
    ]),
  ];
}

function histogramTable(rows: { endpoint: string; histogram: Histogram }[]): string[] {
  const bounds = rows.find((row) => row.histogram.bounds.length > 0)?.histogram.bounds ?? [];
  const used = bounds.map((_, i) => i).filter((i) => rows.some((row) => (row.histogram.counts[i] ?? 0) > 0));
  if (used.length === 0) return ['(no observations)'];
  const head = ['endpoint', 'count', 'p50', 'p99', ...used.map((i) => boundLabel(bounds, i))];
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map((_, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`,
    ...rows.map(
      ({ endpoint, histogram }) =>
        `| ${[endpoint, String(histogram.count), percentileBound(histogram, 50), percentileBound(histogram, 99), ...used.map((i) => String(histogram.counts[i] ?? 0))].join(' | ')} |`,
    ),
  ];
}

/** Markdown: the wait and the hold histograms of one experiment, one row per protected endpoint. */
export function lockMetricsMarkdown(runs: RunResult[], experiment: number): string[] {
  const rows = withMetrics(runs, experiment);
  if (rows.length === 0) return [];
  return [
    `Lock metrics of the protected endpoints, from the apps' \`GET /metrics\` (the library's OpenTelemetry histograms \`distributed_lock_wait_duration\` of acquisitions that got the lock, and \`distributed_lock_hold_duration\`), summed over the app processes; columns are buckets (upper bounds), percentiles the bucket they fall in.`,
    '',
    'Wait for the lock:',
    '',
    ...histogramTable(rows.map(({ endpoint, lockMetrics }) => ({ endpoint, histogram: lockMetrics.wait }))),
    '',
    'Lock held:',
    '',
    ...histogramTable(rows.map(({ endpoint, lockMetrics }) => ({ endpoint, histogram: lockMetrics.hold }))),
    '',
  ];
}
