import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunResult } from './experiments.js';
import { lockMetricsConsole, lockMetricsMarkdown } from './lock-metrics-report.js';

export interface DemoReport {
  startedAt: string;
  machine: string;
  mode: string;
  instances: number;
  workMs: number;
  short: boolean;
  runs: RunResult[];
  failures: string[];
}

const pct = (value: number): string => `${(value * 100).toFixed(1)} %`;
const num = (value: number, digits = 1): string => value.toFixed(digits);

/** The table rows of one experiment; experiment 2 (the throughput run) adds its share of the ceiling. */
function experimentRows(runs: RunResult[], experiment: 1 | 2): string[][] {
  return runs
    .filter((r) => r.experiment === experiment)
    .map((r) => [
      r.endpoint,
      String(r.requests),
      String(r.sold),
      String(r.stockLeft),
      String(r.oversold),
      String(r.soldOut + r.busy + r.staleToken),
      String(r.errors),
      num(r.requestsPerSecond, experiment === 1 ? 1 : 2),
      num(r.p50Ms, 0),
      num(r.p99Ms, 0),
      ...(experiment === 2 ? [pct(r.ceilingShare)] : []),
    ]);
}

const HEAD1 = ['endpoint', 'requests', 'sold', 'stock left', 'oversold', 'rejected', 'errors', 'req/s', 'p50 ms', 'p99 ms'];
const HEAD2 = [...HEAD1, 'share of ceiling'];

function textTable(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]): string => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function markdownTable(head: string[], rows: string[][]): string {
  return [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join(
    '\n',
  );
}

export function consoleReport(report: DemoReport): string {
  const e2 = report.runs.find((r) => r.experiment === 2);
  return [
    `Experiment 1: stock 10, ${report.runs.find((r) => r.experiment === 1)?.requests ?? 0} purchases within 1 s, over ${report.instances} app processes (round-robin)`,
    textTable(HEAD1, experimentRows(report.runs, 1)),
    ...lockMetricsConsole(report.runs, 1),
    '',
    `Experiment 2: ${e2?.requests ?? 0} purchases within ${((e2?.spreadMs ?? 0) / 1000).toFixed(0)} s, ${report.workMs} ms critical section, ceiling ${num(1000 / report.workMs, 0)} req/s` +
      " (the seeds' Redisson run: 14.7 req/s lock = 73 %, 16.1 req/s tryLock = 80 %)",
    textTable(HEAD2, experimentRows(report.runs, 2)),
    ...lockMetricsConsole(report.runs, 2),
  ].join('\n');
}

export function markdownReport(report: DemoReport): string {
  const e2 = report.runs.find((r) => r.experiment === 2);
  return [
    `# Inventory demo results`,
    '',
    `${report.startedAt}, ${report.machine}; Redis mode ${report.mode}; ${report.instances} app processes; critical section ${report.workMs} ms${report.short ? ' (short form)' : ''}.`,
    '',
    '## Experiment 1: stock 10, 100 concurrent purchases within one second',
    '',
    markdownTable(HEAD1, experimentRows(report.runs, 1)),
    '',
    ...lockMetricsMarkdown(report.runs, 1),
    `## Experiment 2: ${e2?.requests ?? 0} purchases within ${((e2?.spreadMs ?? 0) / 1000).toFixed(0)} s, ceiling ${num(1000 / report.workMs, 0)} req/s`,
    '',
    markdownTable(HEAD2, experimentRows(report.runs, 2)),
    '',
    ...lockMetricsMarkdown(report.runs, 2),
    'Source documents (Redisson, one JVM, static stock): 14.7 req/s with lock (73 % of the ceiling), 16.1 req/s with tryLock (80 %).',
    '',
    report.failures.length ? `**Failures:** ${report.failures.join('; ')}` : 'No protected endpoint oversold; the unprotected control did.',
    '',
  ].join('\n');
}

/** A small SVG bar chart: share of the ceiling per endpoint (experiment 2), oversold per endpoint (experiment 1). */
export function chart(report: DemoReport): string {
  const e1 = report.runs.filter((r) => r.experiment === 1);
  const e2 = report.runs.filter((r) => r.experiment === 2);
  const width = 720;
  const barW = 60;
  const parts: string[] = [];
  const panel = (x0: number, title: string, items: { label: string; value: number; text: string; color: string }[], max: number): void => {
    parts.push(`<text x="${x0}" y="24" font-size="14" font-weight="bold">${title}</text>`);
    items.forEach((item, i) => {
      const h = max > 0 ? (item.value / max) * 180 : 0;
      const x = x0 + i * (barW + 20);
      parts.push(`<rect x="${x}" y="${220 - h}" width="${barW}" height="${h}" fill="${item.color}"/>`);
      parts.push(`<text x="${x + barW / 2}" y="${214 - h}" font-size="11" text-anchor="middle">${item.text}</text>`);
      parts.push(`<text x="${x + barW / 2}" y="238" font-size="11" text-anchor="middle">${item.label}</text>`);
    });
  };
  panel(
    20,
    'Exp. 1: oversold (stock 10)',
    e1.map((r) => ({ label: r.endpoint, value: r.oversold, text: String(r.oversold), color: r.endpoint === 'unsafe' ? '#d9534f' : '#5cb85c' })),
    Math.max(1, ...e1.map((r) => r.oversold)),
  );
  panel(
    380,
    'Exp. 2: share of the serial ceiling',
    [
      ...e2.map((r) => ({ label: r.endpoint, value: r.ceilingShare, text: pct(r.ceilingShare), color: '#337ab7' })),
      { label: 'Redisson', value: 0.735, text: '73.5 %', color: '#999' },
    ],
    1,
  );
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="250" font-family="sans-serif">${parts.join('')}</svg>\n`;
}

export function writeReport(directory: string, report: DemoReport): string[] {
  mkdirSync(directory, { recursive: true });
  const files = {
    'demo-results.json': `${JSON.stringify(report, null, 2)}\n`,
    'demo-results.md': markdownReport(report),
    'demo-results.svg': chart(report),
  };
  return Object.entries(files).map(([name, content]) => {
    const path = join(directory, name);
    writeFileSync(path, content);
    return path;
  });
}
