/** Percentile by nearest rank over an unsorted sample (0 for an empty one). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The median of a metric over rounds, and its spread. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

export function spread(values: readonly number[]): Spread {
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return { median: NaN, min: NaN, max: NaN };
  return { median: median(finite), min: Math.min(...finite), max: Math.max(...finite) };
}

/** Collects latencies without growing an array per sample beyond need. */
export class Samples {
  private values: number[] = [];

  add(value: number): void {
    this.values.push(value);
  }

  get count(): number {
    return this.values.length;
  }

  all(): number[] {
    return this.values;
  }

  p(p: number): number {
    return percentile(this.values, p);
  }
}
