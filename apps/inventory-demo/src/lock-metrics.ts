import type { AppInstance } from './app-instances.js';
import { httpRequest } from './http-client.js';

/** One histogram: per-bucket counts (not cumulative) by upper bound in seconds, the last one +Inf. */
export interface Histogram {
  bounds: number[];
  counts: number[];
  count: number;
  sum: number;
}

/** What a run did to the locks, from the apps' /metrics: how long purchases waited for and held them. */
export interface LockHistograms {
  /** distributed_lock_wait_duration of acquisitions that got the lock. */
  wait: Histogram;
  /** distributed_lock_hold_duration of every hold (released or lost). */
  hold: Histogram;
}

const empty = (): Histogram => ({ bounds: [], counts: [], count: 0, sum: 0 });

/** Adds a Prometheus histogram's series (cumulative `_bucket` lines, `_sum`) that pass `keep` into `into`. */
function accumulate(text: string, metric: string, keep: (labels: string) => boolean, into: Histogram): void {
  const cumulative = new Map<number, number>();
  for (const line of text.split('\n')) {
    const match = /^(\w+)\{([^}]*)\} ([0-9.eE+-]+)$/.exec(line);
    if (!match || !keep(match[2]!)) continue;
    const [, name, labels, value] = match;
    if (name === `${metric}_bucket`) {
      const le = /le="([^"]+)"/.exec(labels!)?.[1];
      const bound = le === '+Inf' ? Infinity : Number(le);
      cumulative.set(bound, (cumulative.get(bound) ?? 0) + Number(value));
    } else if (name === `${metric}_sum`) {
      into.sum += Number(value);
    }
  }
  const bounds = [...cumulative.keys()].sort((a, b) => a - b);
  if (into.bounds.length === 0) {
    into.bounds = bounds;
    into.counts = bounds.map(() => 0);
  }
  let below = 0;
  bounds.forEach((bound) => {
    const total = cumulative.get(bound)!;
    const index = into.bounds.indexOf(bound);
    if (index >= 0) into.counts[index]! += total - below;
    below = total;
  });
  into.count = into.counts.reduce((a, b) => a + b, 0);
}

/** The wait and hold histograms summed over every app instance, as of now. */
export async function scrapeLockHistograms(apps: AppInstance[]): Promise<LockHistograms> {
  const result: LockHistograms = { wait: empty(), hold: empty() };
  for (const app of apps) {
    const { status, body } = await httpRequest('GET', `${app.url}/metrics`);
    if (status !== 200 || typeof body !== 'string') throw new Error(`${app.id} /metrics answered ${status}`);
    accumulate(body, 'distributed_lock_wait_duration', (labels) => labels.includes('lock_outcome="acquired"'), result.wait);
    accumulate(body, 'distributed_lock_hold_duration', () => true, result.hold);
  }
  return result;
}

/** What happened between two scrapes. */
export function difference(after: LockHistograms, before: LockHistograms): LockHistograms {
  const minus = (a: Histogram, b: Histogram): Histogram => {
    const counts = a.counts.map((count, i) => count - (b.bounds[i] === a.bounds[i] ? (b.counts[i] ?? 0) : 0));
    return { bounds: a.bounds, counts, count: counts.reduce((x, y) => x + y, 0), sum: a.sum - b.sum };
  };
  return { wait: minus(after.wait, before.wait), hold: minus(after.hold, before.hold) };
}

/** A bucket's upper bound for people: ≤5ms, ≤2.5s, >60s. */
export function boundLabel(bounds: number[], index: number): string {
  const bound = bounds[index]!;
  if (bound === Infinity) return `>${formatSeconds(bounds[index - 1] ?? 0)}`;
  return `≤${formatSeconds(bound)}`;
}

function formatSeconds(seconds: number): string {
  return seconds < 1 ? `${+(seconds * 1000).toFixed(1)}ms` : `${+seconds.toFixed(2)}s`;
}

/** The bucket holding the p-th percentile observation, as its bound (histograms know no more). */
export function percentileBound(histogram: Histogram, p: number): string {
  if (histogram.count === 0) return '-';
  const rank = Math.ceil((p / 100) * histogram.count);
  let seen = 0;
  for (let i = 0; i < histogram.counts.length; i++) {
    seen += histogram.counts[i]!;
    if (seen >= rank) return boundLabel(histogram.bounds, i);
  }
  return '-';
}

/** The non-empty buckets, e.g. `≤10ms:3 ≤25ms:41 ≤50ms:56`. */
export function compactHistogram(histogram: Histogram): string {
  const parts = histogram.counts.flatMap((count, i) => (count > 0 ? [`${boundLabel(histogram.bounds, i)}:${count}`] : []));
  return parts.length === 0 ? '-' : parts.join(' ');
}
