import type { BenchReport, Row } from './results.js';

/** One panel: a horizontal bar per row (the median) with a whisker for the min-max spread. */
interface Panel {
  title: string;
  metric: string;
  unit: string;
  log: boolean;
  rows: Row[];
}

const WIDTH = 920;
const LABEL_W = 250;
const PLOT_W = 520;
const BAR_H = 14;
const GAP = 6;

const escape = (text: string): string => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

function color(row: Row): string {
  if (row.id === 'raw') return '#9e9e9e';
  if (row.id === 'ours' || row.id === 'ours-watchdog') return '#1f6fb4';
  if (row.family) return '#7fb2de';
  return '#e08a2c';
}

function format(value: number, unit: string): string {
  if (unit === 'ms') return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
  return Math.round(value).toLocaleString('en-US');
}

function panel(p: Panel, top: number, parts: string[]): number {
  const rows = p.rows.filter((r) => r.summary[p.metric] && Number.isFinite(r.summary[p.metric]!.median));
  parts.push(`<text x="10" y="${top + 16}" font-size="14" font-weight="bold">${escape(p.title)}${p.log ? ' (log scale)' : ''}</text>`);
  let y = top + 28;
  if (rows.length === 0) {
    parts.push(`<text x="10" y="${y + 12}" font-size="11">no data</text>`);
    return y + 24;
  }
  const max = Math.max(...rows.map((r) => r.summary[p.metric]!.max));
  const min = Math.max(1e-3, Math.min(...rows.map((r) => r.summary[p.metric]!.min)));
  const x = (value: number): number => {
    if (!p.log) return (Math.max(0, value) / max) * PLOT_W;
    const lo = Math.log10(min) - 0.3;
    return ((Math.log10(Math.max(value, min)) - lo) / (Math.log10(max) - lo)) * PLOT_W;
  };
  for (const row of p.rows) {
    const s = row.summary[p.metric];
    parts.push(`<text x="${LABEL_W - 8}" y="${y + BAR_H - 3}" font-size="11" text-anchor="end">${escape(row.label)}</text>`);
    if (!s || !Number.isFinite(s.median)) {
      parts.push(
        `<text x="${LABEL_W + 4}" y="${y + BAR_H - 3}" font-size="11" fill="#a00">${escape(row.status === 'could-not-run' ? 'could not run' : 'no result')}</text>`,
      );
    } else {
      const w = x(s.median);
      parts.push(`<rect x="${LABEL_W}" y="${y}" width="${w.toFixed(1)}" height="${BAR_H}" fill="${color(row)}"/>`);
      const x1 = LABEL_W + x(s.min);
      const x2 = LABEL_W + x(s.max);
      const mid = y + BAR_H / 2;
      parts.push(
        `<path d="M${x1.toFixed(1)} ${mid}H${x2.toFixed(1)}M${x1.toFixed(1)} ${mid - 4}V${mid + 4}M${x2.toFixed(1)} ${mid - 4}V${mid + 4}" stroke="#222" stroke-width="1"/>`,
      );
      parts.push(`<text x="${(Math.max(LABEL_W + w, x2) + 6).toFixed(1)}" y="${y + BAR_H - 3}" font-size="11">${format(s.median, p.unit)} ${p.unit}</text>`);
    }
    y += BAR_H + GAP;
  }
  return y + 10;
}

/** The headline panels of one server's run. */
function serverPanels(rowsOf: (scenario: string) => Row[]): Panel[] {
  const panels: Panel[] = [
    { title: 'Serial: acquire + release cycles/s (one caller)', metric: 'cyclesPerSec', unit: '/s', log: false, rows: rowsOf('serial') },
    { title: 'Serial: p50 latency of a cycle', metric: 'p50Ms', unit: 'ms', log: false, rows: rowsOf('serial') },
    { title: 'Parallel: cycles/s with 100 concurrent callers', metric: 'cyclesPerSec', unit: '/s', log: false, rows: rowsOf('parallel') },
    { title: 'Contended: critical sections/s (4 processes x 8 callers, one key)', metric: 'sectionsPerSec', unit: '/s', log: false, rows: rowsOf('contended') },
    { title: 'Contended: p99 wait to acquire', metric: 'p99WaitMs', unit: 'ms', log: true, rows: rowsOf('contended') },
    { title: 'Decorator: p50 latency of a request', metric: 'p50Ms', unit: 'ms', log: false, rows: rowsOf('decorator') },
    {
      title: 'Semaphore: sections/s (4 processes x 8 callers, one semaphore of 3 permits)',
      metric: 'sectionsPerSec',
      unit: '/s',
      log: false,
      rows: rowsOf('semaphore'),
    },
    { title: 'Semaphore: p99 wait to acquire', metric: 'p99WaitMs', unit: 'ms', log: true, rows: rowsOf('semaphore') },
  ];
  return panels.filter((p) => p.rows.length > 0);
}

/** The report as a hand-written SVG: one panel per headline metric. */
export function chart(report: BenchReport): string {
  // Each metric's panels side by side: one per server (titled with the server when there are several).
  const several = report.servers.length > 1;
  const byServer = report.servers.map((server) =>
    serverPanels((scenario) => server.scenarios.find((s) => s.scenario === scenario)?.rows ?? []).map((p) =>
      several ? { ...p, title: `${p.title}, ${server.version}` } : p,
    ),
  );
  const panels: Panel[] = (byServer[0] ?? []).flatMap((_, i) => byServer.map((list) => list[i]).filter((p): p is Panel => p !== undefined));
  const parts: string[] = [];
  let y = 10;
  parts.push(
    `<text x="10" y="${y + 14}" font-size="15" font-weight="bold">${escape(`npm run bench: medians of ${report.rounds} round(s), whiskers = min-max`)}</text>`,
  );
  parts.push(
    `<text x="10" y="${y + 32}" font-size="11">${escape(`${report.machine.cores} x ${report.machine.cpu}, Node ${report.machine.node}, ${report.machine.redis}`)}</text>`,
  );
  y += 44;
  for (const p of panels) y = panel(p, y, parts);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${y + 10}" font-family="sans-serif"><rect width="100%" height="100%" fill="#fff"/>${parts.join('')}</svg>\n`;
}
