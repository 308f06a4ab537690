import type { Row } from '../results.js';
import type { CurveResult, CurveSeries, ScalingReport } from './results.js';
import type { MetricSpec } from './specs.js';

/** Hand-written SVG line charts: one file per curve, one panel per charted metric, a line per library. */
const PANEL_W = 450;
const PANEL_H = 250;
const COLUMNS = 2;
const MARGIN = { left: 62, right: 14, top: 30, bottom: 48 };
const HEADER_H = 74;

const COLORS: Record<string, string> = {
  raw: '#9e9e9e',
  ours: '#1f6fb4',
  'redis-semaphore': '#e08a2c',
  redlock: '#2ca02c',
  'sesame-redlock': '#9467bd',
  'redlock-universal': '#8c564b',
  'node-redisson': '#d62728',
};

const escape = (text: string): string => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
const color = (id: string): string => COLORS[id] ?? (id.startsWith('ours') ? '#7fb2de' : '#17becf');

/** A tick label: 1 200 -> "1.2k", 3 400 000 -> "3.4M", small values with a few digits. */
function tick(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 1e6) return `${+(value / 1e6).toPrecision(3)}M`;
  if (abs >= 1e3) return `${+(value / 1e3).toPrecision(3)}k`;
  if (abs === 0) return '0';
  return String(+value.toPrecision(2));
}

interface Scale {
  y(value: number): number;
  ticks: number[];
  usable(value: number): boolean;
}

function yScale(values: number[], log: boolean, top: number, height: number): Scale {
  if (log) {
    const positive = values.filter((v) => v > 0);
    const lo = Math.floor(Math.log10(Math.min(...positive, 1e9)));
    const hi = Math.max(lo + 1, Math.ceil(Math.log10(Math.max(...positive, 1e-9))));
    const ticks = Array.from({ length: hi - lo + 1 }, (_, i) => 10 ** (lo + i));
    return { y: (v) => top + height - ((Math.log10(v) - lo) / (hi - lo)) * height, ticks, usable: (v) => Number.isFinite(v) && v > 0 };
  }
  const max = Math.max(...values.filter(Number.isFinite), 0);
  const min = Math.min(...values.filter(Number.isFinite), 0);
  const span = max - min || 1;
  const step = 10 ** Math.floor(Math.log10(span / 4));
  const nice = [1, 2, 2.5, 5, 10].map((m) => m * step).find((s) => span / s <= 5) ?? step * 10;
  const lo = Math.floor(min / nice) * nice;
  const hi = Math.ceil(max / nice) * nice || nice;
  const ticks: number[] = [];
  for (let t = lo; t <= hi + nice / 1e6; t += nice) ticks.push(+t.toPrecision(12));
  return { y: (v) => top + height - ((v - lo) / (hi - lo)) * height, ticks, usable: (v) => Number.isFinite(v) };
}

function panel(curve: CurveResult, metric: MetricSpec, x0: number, y0: number, parts: string[]): void {
  const plotW = PANEL_W - MARGIN.left - MARGIN.right;
  const plotH = PANEL_H - MARGIN.top - MARGIN.bottom;
  const left = x0 + MARGIN.left;
  const top = y0 + MARGIN.top;
  const log = metric.chart === 'log';
  const scale = metric.scale ?? 1;
  const series = curve.series.filter((s) => s.status !== 'could-not-run');
  const spreadOf = (row: Row): { median: number; min: number; max: number } | undefined => {
    const s = row.summary[metric.id];
    return s && Number.isFinite(s.median) ? { median: s.median * scale, min: s.min * scale, max: s.max * scale } : undefined;
  };
  const values = series.flatMap((s) =>
    s.points.flatMap((row) => {
      const s2 = spreadOf(row);
      return s2 ? [s2.min, s2.max] : [];
    }),
  );
  parts.push(
    `<text x="${x0 + 8}" y="${y0 + 18}" font-size="13" font-weight="bold">${escape(`${metric.label}${metric.unit && !metric.label.includes(metric.unit) ? ` (${metric.unit})` : ''}${log ? ', log scale' : ''}`)}</text>`,
  );
  if (values.length === 0) {
    parts.push(`<text x="${left + 10}" y="${top + 20}" font-size="11">no data</text>`);
    return;
  }
  const sc = yScale(values, log, top, plotH);
  for (const t of sc.ticks) {
    const y = sc.y(t);
    parts.push(`<path d="M${left} ${y.toFixed(1)}H${left + plotW}" stroke="#e3e3e3"/>`);
    parts.push(`<text x="${left - 6}" y="${(y + 4).toFixed(1)}" font-size="10" text-anchor="end">${tick(t)}</text>`);
  }
  parts.push(`<path d="M${left} ${top}V${top + plotH}H${left + plotW}" stroke="#444" fill="none"/>`);
  const n = curve.points.length;
  const xOf = (i: number): number => left + ((i + 0.5) * plotW) / n;
  // A label of two parts ("10,000 on 100") goes on two lines, so that long ones do not run into each other.
  curve.points.forEach((p, i) => {
    const [first, ...rest] = p.label.split(' on ');
    const x = xOf(i).toFixed(1);
    const second = rest.length ? `<tspan x="${x}" dy="11">on ${escape(rest.join(' on '))}</tspan>` : '';
    parts.push(`<text x="${x}" y="${top + plotH + 14}" font-size="10" text-anchor="middle">${escape(first!)}${second}</text>`);
  });
  parts.push(`<text x="${left + plotW / 2}" y="${top + plotH + 38}" font-size="11" text-anchor="middle">${escape(curve.xLabel)}</text>`);
  series.forEach((s, k) => drawSeries(s, k, series.length, spreadOf, sc, xOf, parts));
}

function drawSeries(
  s: CurveSeries,
  k: number,
  count: number,
  spreadOf: (row: Row) => { median: number; min: number; max: number } | undefined,
  sc: Scale,
  xOf: (i: number) => number,
  parts: string[],
): void {
  const dx = (k - (count - 1) / 2) * 3;
  const c = color(s.id);
  let path = '';
  let pen = false;
  s.points.forEach((row, i) => {
    const v = spreadOf(row);
    if (!v || !sc.usable(v.median)) {
      pen = false;
      return;
    }
    const x = xOf(i) + dx;
    const y = sc.y(v.median);
    path += `${pen ? 'L' : 'M'}${x.toFixed(1)} ${y.toFixed(1)}`;
    pen = true;
    if (sc.usable(v.min) && sc.usable(v.max) && v.max > v.min)
      parts.push(`<path d="M${x.toFixed(1)} ${sc.y(v.min).toFixed(1)}V${sc.y(v.max).toFixed(1)}" stroke="${c}" stroke-width="1"/>`);
    parts.push(`<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="3" fill="${c}"/>`);
  });
  if (path) parts.push(`<path d="${path}" stroke="${c}" stroke-width="2" fill="none"/>`);
}

/** The SVG of one curve. */
export function curveChart(report: ScalingReport, curve: CurveResult): string {
  const metrics = curve.metrics.filter((m) => m.chart);
  const rows = Math.ceil(metrics.length / COLUMNS);
  const width = PANEL_W * COLUMNS + 20;
  const parts: string[] = [];
  parts.push(`<text x="10" y="22" font-size="15" font-weight="bold">${escape(curve.title)}</text>`);
  const machine = report.machine;
  parts.push(
    `<text x="10" y="40" font-size="11">${escape(`medians of ${report.rounds} round(s), whiskers = min-max; ${machine.cores} x ${machine.cpu}, Node ${machine.node}, ${machine.redis}; load average at start ${machine.loadAverageAtStart.join(' / ')}`)}</text>`,
  );
  let lx = 10;
  for (const s of curve.series) {
    const label = s.status === 'could-not-run' ? `${s.label} (not measured)` : s.label;
    parts.push(`<path d="M${lx} 58H${lx + 22}" stroke="${color(s.id)}" stroke-width="3"/>`);
    parts.push(`<text x="${lx + 27}" y="62" font-size="11">${escape(label)}</text>`);
    lx += 40 + label.length * 6;
  }
  metrics.forEach((metric, i) => panel(curve, metric, 10 + (i % COLUMNS) * PANEL_W, HEADER_H + Math.floor(i / COLUMNS) * PANEL_H, parts));
  const height = HEADER_H + rows * PANEL_H + 10;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif"><rect width="100%" height="100%" fill="#fff"/>${parts.join('')}</svg>\n`;
}
