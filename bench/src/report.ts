import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chart } from './chart.js';
import { describeMachine } from './machine.js';
import type { BenchScenario } from './options.js';
import type { BenchReport, RoundRun, Row, ScenarioResult, ServerResult } from './results.js';
import type { Spread } from './stats.js';

interface Column {
  head: string;
  cell(row: Row, scenario: ScenarioResult): string;
}

const fixed = (value: number | undefined, digits: number): string => (value === undefined || Number.isNaN(value) ? '-' : value.toFixed(digits));
const rate = (value: number | undefined): string => (value === undefined || Number.isNaN(value) ? '-' : Math.round(value).toLocaleString('en-US'));
const range = (s: Spread | undefined, format: (v: number) => string): string => (s ? `${format(s.min)}-${format(s.max)}` : '-');
const median = (row: Row, metric: string): number | undefined => row.summary[metric]?.median;
const ms = (digits: number) => (v: number) => fixed(v, digits);

function rawMedian(scenario: ScenarioResult, metric: string): number | undefined {
  return scenario.rows.find((r) => r.id === 'raw')?.summary[metric]?.median;
}

function errorCount(row: Row): string {
  const total = row.runs.reduce((sum, run) => sum + (run.errors?.errors ?? 0), 0);
  return String(total);
}

function lostPerRound(row: Row): string {
  const values = row.runs.filter((run) => run.metrics).map((run) => String(run.metrics!.lostUpdates ?? 0));
  return values.length ? values.join(', ') : '-';
}

const COLUMNS: Record<BenchScenario, Column[]> = {
  serial: [
    { head: 'cycles/s', cell: (r) => rate(median(r, 'cyclesPerSec')) },
    { head: 'spread', cell: (r) => range(r.summary.cyclesPerSec, rate) },
    { head: 'p50 ms', cell: (r) => fixed(median(r, 'p50Ms'), 3) },
    { head: 'p50 spread', cell: (r) => range(r.summary.p50Ms, ms(3)) },
    { head: 'p99 ms', cell: (r) => fixed(median(r, 'p99Ms'), 3) },
    { head: 'p50 vs raw', cell: (r, s) => ratio(median(r, 'p50Ms'), rawMedian(s, 'p50Ms')) },
    { head: 'client CPU us/cycle', cell: (r) => fixed(median(r, 'clientCpuUsPerCycle'), 0) },
    { head: 'errors', cell: errorCount },
  ],
  parallel: [
    { head: 'cycles/s', cell: (r) => rate(median(r, 'cyclesPerSec')) },
    { head: 'spread', cell: (r) => range(r.summary.cyclesPerSec, rate) },
    { head: 'vs raw', cell: (r, s) => ratio(median(r, 'cyclesPerSec'), rawMedian(s, 'cyclesPerSec')) },
    { head: 'errors', cell: errorCount },
  ],
  contended: [
    { head: 'sections/s', cell: (r) => rate(median(r, 'sectionsPerSec')) },
    { head: 'spread', cell: (r) => range(r.summary.sectionsPerSec, rate) },
    { head: 'p50 wait ms', cell: (r) => fixed(median(r, 'p50WaitMs'), 2) },
    { head: 'p99 wait ms', cell: (r) => fixed(median(r, 'p99WaitMs'), 1) },
    { head: 'p99 spread', cell: (r) => range(r.summary.p99WaitMs, ms(1)) },
    { head: 'busiest process %', cell: (r) => fixed(median(r, 'busiestProcessPercent'), 0) },
    { head: 'lost updates (per round)', cell: lostPerRound },
    { head: 'unfinished waits', cell: (r) => String(r.runs.reduce((sum, run) => sum + (run.metrics?.unfinishedWaits ?? 0), 0)) },
    { head: 'errors', cell: errorCount },
  ],
  semaphore: [
    { head: 'sections/s', cell: (r) => rate(median(r, 'sectionsPerSec')) },
    { head: 'spread', cell: (r) => range(r.summary.sectionsPerSec, rate) },
    { head: 'p50 wait ms', cell: (r) => fixed(median(r, 'p50WaitMs'), 2) },
    { head: 'p99 wait ms', cell: (r) => fixed(median(r, 'p99WaitMs'), 1) },
    { head: 'p99 spread', cell: (r) => range(r.summary.p99WaitMs, ms(1)) },
    { head: 'busiest process %', cell: (r) => fixed(median(r, 'busiestProcessPercent'), 0) },
    {
      head: 'max in use',
      cell: (r) =>
        r.runs
          .filter((run) => run.metrics)
          .map((run) => String(run.metrics!.maxInUse))
          .join(', ') || '-',
    },
    { head: 'over permits', cell: (r) => String(r.runs.reduce((sum, run) => sum + (run.metrics?.overPermits ?? 0), 0)) },
    { head: 'unfinished waits', cell: (r) => String(r.runs.reduce((sum, run) => sum + (run.metrics?.unfinishedWaits ?? 0), 0)) },
    { head: 'errors', cell: errorCount },
  ],
  decorator: [
    { head: 'req/s', cell: (r) => rate(median(r, 'requestsPerSec')) },
    { head: 'p50 ms', cell: (r) => fixed(median(r, 'p50Ms'), 3) },
    { head: 'p50 spread', cell: (r) => range(r.summary.p50Ms, ms(3)) },
    { head: 'p99 ms', cell: (r) => fixed(median(r, 'p99Ms'), 3) },
    { head: 'added p50 ms', cell: (r) => fixed(median(r, 'addedP50Ms'), 3) },
    { head: 'added spread', cell: (r) => range(r.summary.addedP50Ms, ms(3)) },
    { head: 'round trips ms', cell: (r) => fixed(median(r, 'roundTripsMs'), 3) },
    { head: 'beyond round trips ms', cell: (r) => fixed(median(r, 'addedBeyondRoundTripsMs'), 3) },
    { head: 'errors', cell: errorCount },
  ],
};

function ratio(value: number | undefined, base: number | undefined): string {
  if (value === undefined || base === undefined || !base || Number.isNaN(value)) return '-';
  return `${(value / base).toFixed(2)}x`;
}

function cells(scenario: ScenarioResult): { head: string[]; rows: string[][] } {
  const columns = COLUMNS[scenario.scenario];
  const head = [scenario.scenario === 'decorator' ? 'endpoint' : 'library', ...columns.map((c) => c.head)];
  const rows = scenario.rows.map((row) => {
    if (row.status === 'could-not-run') return [row.label, `could not run: ${row.reason ?? ''}`, ...columns.slice(1).map(() => '')];
    const values = [row.label, ...columns.map((c) => c.cell(row, scenario))];
    if (row.status === 'failed') values[values.length - 1] += ` (failed: ${row.reason ?? ''})`;
    return values;
  });
  return { head, rows };
}

function textTable(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.filter((r) => !r[1]?.startsWith('could not run')).map((row) => row[i]!.length)));
  const line = (row: string[]): string =>
    row[1]?.startsWith('could not run')
      ? `${row[0]!.padEnd(widths[0]!)}  ${row[1]}`
      : row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function markdownTable(head: string[], rows: string[][]): string {
  return [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join(
    '\n',
  );
}

/** One row per target; per server, what it measured and whether it met the goal (ratios within that server's run). */
function targetTable(report: BenchReport): { head: string[]; rows: string[][] } {
  const head = ['target', 'goal', ...report.servers.flatMap((s) => (report.servers.length > 1 ? [s.version, 'result'] : ['measured', 'result']))];
  const rows = (report.servers[0]?.targets ?? []).map((first, i) => [
    first.description,
    first.goal,
    ...report.servers.flatMap((s) => {
      const t = s.targets[i]!;
      return [t.measured, t.met === null ? 'n/a' : t.met ? 'met' : 'NOT met'];
    }),
  ]);
  return { head, rows };
}

/** Each server's table of a scenario, under the server's name when there are several. */
function perServer(
  report: BenchReport,
  scenario: ScenarioResult['scenario'],
  each: (server: ServerResult, result: ScenarioResult, heading: string) => void,
): void {
  for (const server of report.servers) {
    const result = server.scenarios.find((s) => s.scenario === scenario);
    if (result) each(server, result, report.servers.length > 1 ? server.version : '');
  }
}

const COMPARISON_HEAD = ['metric', 'ours (median)', 'peer (median)', 'ours / peer', 'better'];

function comparisonRows(report: BenchReport): string[][] {
  const several = report.servers.length > 1;
  return report.servers.flatMap((server) => comparisonRowsOf(server).map((row) => (several ? [`${server.version}: ${row[0]}`, ...row.slice(1)] : row)));
}

function comparisonRowsOf(report: ServerResult): string[][] {
  const value = (side: { id: string; median: number } | null, unit: string): string =>
    side ? `${side.id} ${unit === 'ms' ? fixed(side.median, 3) : rate(side.median)}${unit === 'ms' ? ' ms' : '/s'}` : '-';
  return report.comparisons.map((c) => {
    const unit = c.metric.endsWith('Ms') ? 'ms' : 'rate';
    return [
      c.description,
      value(c.ours, unit),
      value(c.peer, unit),
      c.ratio === null ? '-' : `${c.ratio.toFixed(2)}x`,
      c.better === 'lower' ? 'lower' : 'higher',
    ];
  });
}

/** One line per finished run, for progress. */
export function formatRun(scenario: BenchScenario, id: string, run: RoundRun): string {
  const name = id.padEnd(20);
  if (run.status !== 'ok') return `  ${name} ${run.status}: ${run.reason}`;
  const m = run.metrics!;
  const errors = run.errors?.errors ? `  errors ${run.errors.errors} (${run.errors.firstError})` : '';
  switch (scenario) {
    case 'serial':
      return `  ${name} ${rate(m.cyclesPerSec).padStart(9)} cycles/s  p50 ${fixed(m.p50Ms, 3)} ms  p99 ${fixed(m.p99Ms, 3)} ms  client CPU ${fixed(m.clientCpuUsPerCycle, 0)} us/cycle${errors}`;
    case 'parallel':
      return `  ${name} ${rate(m.cyclesPerSec).padStart(9)} cycles/s${errors}`;
    case 'contended':
      return `  ${name} ${rate(m.sectionsPerSec).padStart(9)} sections/s  wait p50 ${fixed(m.p50WaitMs, 2)} ms  p99 ${fixed(m.p99WaitMs, 1)} ms  busiest process ${fixed(m.busiestProcessPercent, 0)} %  lost ${m.lostUpdates} of ${m.sections}${m.unfinishedWaits ? `  unfinished waits ${m.unfinishedWaits}` : ''}${errors}`;
    case 'semaphore':
      return `  ${name} ${rate(m.sectionsPerSec).padStart(9)} sections/s  wait p50 ${fixed(m.p50WaitMs, 2)} ms  p99 ${fixed(m.p99WaitMs, 1)} ms  busiest process ${fixed(m.busiestProcessPercent, 0)} %  max in use ${m.maxInUse} of ${m.permits}${m.overPermits ? `  OVER PERMITS ${m.overPermits}` : ''}${m.unfinishedWaits ? `  unfinished waits ${m.unfinishedWaits}` : ''}${errors}`;
    case 'decorator':
      return `  ${name} ${rate(m.requestsPerSec).padStart(9)} req/s  p50 ${fixed(m.p50Ms, 3)} ms  p99 ${fixed(m.p99Ms, 3)} ms${m.addedP50Ms === undefined ? '' : `  added p50 ${fixed(m.addedP50Ms, 3)} ms`}${errors}`;
  }
}

export function consoleReport(report: BenchReport): string {
  const parts = [`${report.command}\n${describeMachine(report.machine)}\nmedians of ${report.rounds} round(s); spread = min-max over rounds`];
  for (const { scenario } of report.servers[0]?.scenarios ?? []) {
    perServer(report, scenario, (_, result, heading) => {
      const { head, rows } = cells(result);
      parts.push(`${result.title}${heading ? `, on ${heading}` : ''}\n${result.description}\n${textTable(head, rows)}`);
    });
  }
  const targets = targetTable(report);
  parts.push(`Targets (ratios of medians, each within its server's run)\n${textTable(targets.head, targets.rows)}`);
  if (report.servers.some((s) => s.comparisons.length))
    parts.push(`Semaphores side by side (ratios of medians from this run)\n${textTable(COMPARISON_HEAD, comparisonRows(report))}`);
  if (report.failures.length) parts.push(`Failures:\n${report.failures.map((f) => `  - ${f}`).join('\n')}`);
  if (report.notes.length) parts.push(`Notes:\n${report.notes.map((n) => `  - ${n}`).join('\n')}`);
  return parts.join('\n\n');
}

function settingsText(settings: Record<string, string | number | boolean>): string {
  return Object.entries(settings)
    .map(([key, value]) => `${key}: ${String(value)}`)
    .join('; ')
    .replaceAll('|', '\\|');
}

export function markdownReport(report: BenchReport): string {
  const lines = [
    '# Benchmark: nestjs-distributed-lock and its peers',
    '',
    `Command: \`${report.command}\`, ${report.startedAt} to ${report.finishedAt}.`,
    '',
    `Machine: ${describeMachine(report.machine)}.`,
    '',
    `Medians of ${report.rounds} round(s); "spread" is min-max over the rounds. Every library gets a ${report.method.leaseMs} ms lease. ${report.method.rounds}. ${report.method.redis}. ${report.method.sessions}.`,
    '',
  ];
  for (const first of report.servers[0]?.scenarios ?? []) {
    lines.push(`## ${first.title}`, '', first.description + '.', '');
    perServer(report, first.scenario, (_, result, heading) => {
      const { head, rows } = cells(result);
      lines.push(...(heading ? [`### ${heading}`, ''] : []), markdownTable(head, rows), '');
    });
  }
  const targets = targetTable(report);
  lines.push('## Targets', '', "Ratios of medians, each within its server's run.", '', markdownTable(targets.head, targets.rows), '');
  if (report.servers.some((s) => s.comparisons.length)) {
    lines.push(
      '## Semaphores side by side',
      '',
      "Our semaphore against the peer semaphore, ratios of medians within each server's run.",
      '',
      markdownTable(COMPARISON_HEAD, comparisonRows(report)),
      '',
    );
  }
  lines.push(
    '## Libraries and settings',
    '',
    markdownTable(
      ['row', 'package', 'version', 'settings'],
      report.libraries.map((l) => [l.id, l.packageName || '(hand-written baseline)', l.version || '-', settingsText(l.settings)]),
    ),
    '',
  );
  if (report.failures.length) lines.push('## Failures', '', ...report.failures.map((f) => `- ${f}`), '');
  if (report.notes.length) lines.push('## Notes', '', ...report.notes.map((n) => `- ${n}`), '');
  return lines.join('\n');
}

export function writeReport(directory: string, report: BenchReport): string[] {
  mkdirSync(directory, { recursive: true });
  const files = {
    'latest.json': `${JSON.stringify(report, null, 2)}\n`,
    'latest.md': markdownReport(report),
    'latest.svg': chart(report),
  };
  return Object.entries(files).map(([name, content]) => {
    const path = join(directory, name);
    writeFileSync(path, content);
    return path;
  });
}
