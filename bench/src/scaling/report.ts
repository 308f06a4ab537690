import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeMachine } from '../machine.js';
import type { Row } from '../results.js';
import { curveChart } from './chart.js';
import type { CurveResult, ScalingReport } from './results.js';
import type { MetricSpec } from './specs.js';

export const SCALING_FILES = { json: 'scaling.json', markdown: 'scaling.md', svg: (curve: string): string => `scaling-${curve}.svg` };

function format(value: number | undefined, metric: MetricSpec): string {
  if (value === undefined || !Number.isFinite(value)) return '-';
  const shown = value * (metric.scale ?? 1);
  if (metric.unit === '/s' || metric.unit === 'B' || (metric.digits === 0 && Math.abs(shown) >= 1000)) return Math.round(shown).toLocaleString('en-US');
  return shown.toFixed(metric.digits);
}

function cell(row: Row, metric: MetricSpec): string {
  return format(row.summary[metric.id]?.median, metric);
}

function spread(row: Row, metric: MetricSpec): string {
  const s = row.summary[metric.id];
  return s && Number.isFinite(s.min) ? `${format(s.min, metric)}-${format(s.max, metric)}` : '-';
}

/** A curve as a table: a row per point and library, the first metric with its spread, then the others. */
export function curveTable(curve: CurveResult): { head: string[]; rows: string[][] } {
  const [main, ...others] = curve.metrics;
  const head = [curve.xLabel, 'library', main!.label, 'spread', ...others.map((m) => m.label)];
  const rows: string[][] = [];
  curve.points.forEach((point, i) => {
    for (const series of curve.series) {
      if (series.status === 'could-not-run') continue;
      const row = series.points[i]!;
      if (row.status === 'could-not-run' || row.runs.every((run) => !run.metrics)) {
        rows.push([point.label, series.label, `${row.status}: ${row.reason ?? ''}`, '', ...others.map(() => '')]);
        continue;
      }
      const values = [point.label, series.label, cell(row, main!), spread(row, main!), ...others.map((m) => cell(row, m))];
      const errors = row.runs.filter((run) => run.errors?.errors);
      if (errors.length) values[values.length - 1] += ` (errors in ${errors.length} of ${row.runs.length} rounds: ${errors[0]!.errors!.firstError ?? ''})`;
      if (row.status === 'failed') values[values.length - 1] += ` (failed: ${row.reason ?? ''})`;
      rows.push(values);
    }
  });
  return { head, rows };
}

function markdownTable(head: string[], rows: string[][]): string {
  const escapeCell = (text: string): string => text.replaceAll('|', '\\|');
  return [
    `| ${head.map(escapeCell).join(' | ')} |`,
    `|${head.map((_, i) => (i < 2 ? ' --- ' : ' ---: ')).join('|')}|`,
    ...rows.map((row) => `| ${row.map(escapeCell).join(' | ')} |`),
  ].join('\n');
}

function notMeasured(curve: CurveResult): string[] {
  return curve.series.filter((s) => s.status === 'could-not-run').map((s) => `- ${s.label}: not measured (${s.reason ?? ''})`);
}

export function scalingMarkdown(report: ScalingReport): string {
  const lines = [
    '# Cost curves: how the cost grows as the work grows',
    '',
    `Command: \`${report.command}\`, ${report.startedAt} to ${report.finishedAt}.`,
    '',
    `Machine: ${describeMachine(report.machine)}.`,
    '',
    `Medians of ${report.rounds} round(s); "spread" is min-max over the rounds of the first figure. Method:`,
    '',
    ...Object.entries(report.method).map(([key, value]) => `- ${key}: ${value}`),
    '',
  ];
  for (const curve of report.curves) {
    const { head, rows } = curveTable(curve);
    lines.push(`## ${curve.title}`, '', `${curve.description}.`, '', markdownTable(head, rows), '');
    const missing = notMeasured(curve);
    if (missing.length) lines.push(...missing, '');
    lines.push(`![${curve.title}](${SCALING_FILES.svg(curve.curve)})`, '');
  }
  lines.push(
    '## Libraries',
    '',
    markdownTable(
      ['row', 'package', 'version', 'renewal (watchdog curve)'],
      report.libraries.map((l) => [l.id, l.packageName || '(hand-written baseline)', l.version || '-', l.renewal ?? '-']),
    ),
    '',
  );
  if (report.failures.length) lines.push('## Failures', '', ...report.failures.map((f) => `- ${f}`), '');
  if (report.notes.length) lines.push('## Notes', '', ...report.notes.map((n) => `- ${n}`), '');
  return lines.join('\n');
}

export function scalingConsoleReport(report: ScalingReport): string {
  const parts = [`${report.command}\n${describeMachine(report.machine)}\nmedians of ${report.rounds} round(s)`];
  for (const curve of report.curves) {
    const { head, rows } = curveTable(curve);
    parts.push(`${curve.title}\n${markdownTable(head, rows)}${notMeasured(curve).length ? `\n${notMeasured(curve).join('\n')}` : ''}`);
  }
  if (report.failures.length) parts.push(`Failures:\n${report.failures.map((f) => `  - ${f}`).join('\n')}`);
  if (report.notes.length) parts.push(`Notes:\n${report.notes.map((n) => `  - ${n}`).join('\n')}`);
  return parts.join('\n\n');
}

export function writeScalingReport(directory: string, report: ScalingReport): string[] {
  mkdirSync(directory, { recursive: true });
  const files: Record<string, string> = {
    [SCALING_FILES.json]: `${JSON.stringify(report, null, 2)}\n`,
    [SCALING_FILES.markdown]: scalingMarkdown(report),
  };
  for (const curve of report.curves) files[SCALING_FILES.svg(curve.curve)] = curveChart(report, curve);
  return Object.entries(files).map(([name, content]) => {
    const path = join(directory, name);
    writeFileSync(path, content);
    return path;
  });
}
