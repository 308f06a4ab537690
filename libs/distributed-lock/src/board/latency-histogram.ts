/** Sub-buckets per doubling: a recorded value is known to within 2^(1/8) - 1, about 9 %. */
const STEPS_PER_DOUBLING = 8;
/** The smallest value told apart from 0, in ms. */
const FLOOR_MS = 0.01;
/** Buckets from 0.01 ms to 2^36 x 0.01 ms (about 8 days); longer values go into the last one. */
const BUCKETS = 36 * STEPS_PER_DOUBLING + 1;

/**
 * Durations in ms, counted in logarithmic buckets (HdrHistogram's idea, small): memory is fixed
 * (a few hundred counters) whatever the number of values, and a percentile is exact to about 9 %.
 */
export class LatencyHistogram {
  private readonly counts = new Uint32Array(BUCKETS);
  count = 0;
  max = 0;
  sum = 0;

  record(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    this.counts[bucketOf(ms)]! += 1;
    this.count += 1;
    this.sum += ms;
    if (ms > this.max) this.max = ms;
  }

  /** The value below which `p` % of the recorded ones fall (the bucket's upper bound, never above the max); undefined when empty. */
  percentile(p: number): number | undefined {
    if (this.count === 0) return undefined;
    const rank = Math.max(1, Math.ceil((p / 100) * this.count));
    let seen = 0;
    for (let bucket = 0; bucket < BUCKETS; bucket++) {
      seen += this.counts[bucket]!;
      if (seen >= rank) return Math.min(upperBound(bucket), this.max);
    }
    return this.max;
  }
}

function bucketOf(ms: number): number {
  if (ms <= FLOOR_MS) return 0;
  return Math.min(BUCKETS - 1, Math.ceil(STEPS_PER_DOUBLING * Math.log2(ms / FLOOR_MS)));
}

function upperBound(bucket: number): number {
  return bucket === 0 ? FLOOR_MS : FLOOR_MS * 2 ** (bucket / STEPS_PER_DOUBLING);
}
