import type { LockAcquiredEvent, LockEvents, LockFailedEvent, LockLostEvent, LockReleasedEvent } from '../core/index.js';
import { LatencyHistogram } from './latency-histogram.js';

/** The label of names past the board's limit of labels. */
export const OTHER_NAMES = '(other names)';

/** What the board shows per label (a lock name, or what metricName made of it), in this process since it started. */
export interface LockStatsRow {
  readonly label: string;
  readonly acquired: number;
  readonly timedOut: number;
  /** Calls that failed on a Redis error or were aborted by their caller. */
  readonly failed: number;
  readonly wait: DurationSummary;
  readonly hold: DurationSummary;
  readonly leasesLost: number;
}

export interface DurationSummary {
  readonly count: number;
  readonly p50Ms: number | undefined;
  readonly p90Ms: number | undefined;
  readonly p99Ms: number | undefined;
  readonly maxMs: number | undefined;
}

interface Tally {
  acquired: number;
  timedOut: number;
  failed: number;
  leasesLost: number;
  readonly wait: LatencyHistogram;
  readonly hold: LatencyHistogram;
}

function summary(histogram: LatencyHistogram): DurationSummary {
  return {
    count: histogram.count,
    p50Ms: histogram.percentile(50),
    p90Ms: histogram.percentile(90),
    p99Ms: histogram.percentile(99),
    maxMs: histogram.count === 0 ? undefined : histogram.max,
  };
}

/**
 * Wait and hold times, outcomes and lost leases per lock label, from the lock client's own events
 * (the same ones the OpenTelemetry metrics count) in this process. Listens from `start` to `stop`;
 * memory is bounded by the number of labels (`maxLabels`, then "(other names)").
 */
export class LockStats {
  private readonly tallies = new Map<string, Tally>();
  private readonly labels = new Map<string, string | undefined>();
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly metricName: (name: string) => string | undefined,
    private readonly maxLabels: number,
  ) {}

  start(events: LockEvents): void {
    if (this.unsubscribe) return;
    const acquired = (event: LockAcquiredEvent): void => {
      if (event.reentrant) return; // never waits, as in the metrics
      const tally = this.tally(event.name);
      if (!tally) return;
      tally.acquired += 1;
      tally.wait.record(event.waitedMs);
    };
    const failed = (event: LockFailedEvent): void => {
      const tally = this.tally(event.name);
      if (!tally) return;
      if (event.outcome === 'timeout') tally.timedOut += 1;
      else tally.failed += 1;
      tally.wait.record(event.waitedMs);
    };
    const released = (event: LockReleasedEvent): void => this.tally(event.name)?.hold.record(event.heldMs);
    const lost = (event: LockLostEvent): void => {
      const tally = this.tally(event.name);
      if (!tally) return;
      tally.leasesLost += 1;
      tally.hold.record(event.heldMs);
    };
    events.on('acquired', acquired);
    events.on('failed', failed);
    events.on('released', released);
    events.on('lost', lost);
    this.unsubscribe = () => {
      events.off('acquired', acquired);
      events.off('failed', failed);
      events.off('released', released);
      events.off('lost', lost);
    };
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** Every label's figures, the busiest first (by calls, then lost leases). */
  rows(): LockStatsRow[] {
    return [...this.tallies.entries()]
      .map(([label, tally]) => ({
        label,
        acquired: tally.acquired,
        timedOut: tally.timedOut,
        failed: tally.failed,
        leasesLost: tally.leasesLost,
        wait: summary(tally.wait),
        hold: summary(tally.hold),
      }))
      .sort((a, b) => b.wait.count - a.wait.count || b.leasesLost - a.leasesLost || a.label.localeCompare(b.label));
  }

  private tally(name: string): Tally | undefined {
    const label = this.label(name);
    if (label === undefined) return undefined;
    let tally = this.tallies.get(label);
    if (!tally) {
      const key = this.tallies.size >= this.maxLabels ? OTHER_NAMES : label;
      tally = this.tallies.get(key) ?? { acquired: 0, timedOut: 0, failed: 0, leasesLost: 0, wait: new LatencyHistogram(), hold: new LatencyHistogram() };
      this.tallies.set(key, tally);
    }
    return tally;
  }

  /** The label of a name, remembered for the most recent names (a metricName that throws leaves the lock out). */
  private label(name: string): string | undefined {
    if (this.labels.has(name)) return this.labels.get(name);
    if (this.labels.size >= 4096) this.labels.clear();
    let label: string | undefined;
    try {
      label = this.metricName(name);
    } catch {
      label = undefined; // a mapping that throws must not break the lock call that emitted the event
    }
    this.labels.set(name, label);
    return label;
  }
}
