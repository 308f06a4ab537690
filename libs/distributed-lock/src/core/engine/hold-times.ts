/** How many recent holds of one lock name are remembered, and how many names. */
const HOLDS_PER_NAME = 16;
const NAMES = 1000;

/**
 * Recent hold durations of lock names in this process, to tell a caller who gave up waiting when to
 * come back (`LockAcquireTimeoutError.retryAfterMs`, the `Retry-After` header). The holder's
 * remaining lease alone is a poor estimate for a watchdog-renewed lock: it is always most of the
 * watchdog timeout (30 s), however short the work is.
 *
 * Only names a wait in this process has run out on are followed (`follow`): an uncontended lock costs
 * nothing here, and a contended one is estimated from its holds after the first time-out.
 */
export class HoldTimes {
  private readonly byName = new Map<string, number[]>();

  /** Starts following `name` (a wait on it ran out here). */
  follow(name: string): void {
    if (this.byName.has(name)) return;
    if (this.byName.size >= NAMES) this.byName.delete(this.byName.keys().next().value!); // least recently used first
    this.byName.set(name, []);
  }

  /** A hold of `name` ended after `heldMs`; kept if the name is followed. */
  record(name: string, heldMs: number): void {
    const recent = this.byName.get(name);
    if (!recent) return;
    this.byName.delete(name); // re-inserted below: the map's order is least recently used first
    recent.push(heldMs);
    if (recent.length > HOLDS_PER_NAME) recent.shift();
    this.byName.set(name, recent);
  }

  /**
   * When to retry a lock that stayed busy for `waitedMs`, never later than the holder's remaining
   * lease (`remainingLeaseMs`, when known), by which the lock is free whatever happens: the median of
   * its recent holds here; with none seen, the remaining lease itself when it looks like an explicit
   * lease, or as long as the caller just waited when it looks watchdog-renewed. (A watchdog lease is
   * renewed every third of `watchdogMs`, so it keeps more than two thirds of it left; the remaining
   * lease then says nothing about the work.)
   */
  retryAfterMs(name: string, remainingLeaseMs: number, waitedMs: number, watchdogMs: number): number {
    const recent = this.byName.get(name)?.length ? this.byName.get(name) : undefined;
    if (remainingLeaseMs <= 0) return recent ? median(recent) : waitedMs;
    if (recent) return Math.min(remainingLeaseMs, median(recent));
    return remainingLeaseMs > (watchdogMs * 2) / 3 ? Math.min(remainingLeaseMs, waitedMs) : remainingLeaseMs;
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
