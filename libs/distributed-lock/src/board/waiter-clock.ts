/** Waiters not seen for this long are forgotten. */
const FORGET_AFTER_MS = 60_000;
const MAX_ENTRIES = 50_000;

/**
 * When the board first saw each waiter of another process in line, since Redis keeps their order but
 * not when they arrived. A waiter present at the board's first look at its lock is marked `atLeast`.
 * Times are monotonic ms; memory is bounded (entries not seen for a minute are dropped).
 */
export class WaiterClock {
  private readonly firstSeen = new Map<string, { at: number; lastSeen: number; atLeast: boolean }>();
  private readonly locksSeen = new Map<string, number>();
  private lastSweep = 0;

  /** Marks the lock `lock` as looked at now; true if it was looked at before (so new waiters just arrived). */
  look(lock: string, now: number): boolean {
    const before = this.locksSeen.has(lock);
    this.locksSeen.set(lock, now);
    this.sweep(now);
    return before;
  }

  /** How long the waiter `key` of `lock` has been seen waiting, and whether it may have waited longer. */
  seen(lock: string, key: string, now: number, lockSeenBefore: boolean): { waitedMs: number; atLeast: boolean } {
    const id = `${lock}\u0000${key}`;
    let entry = this.firstSeen.get(id);
    if (!entry) {
      if (this.firstSeen.size >= MAX_ENTRIES) this.firstSeen.clear();
      entry = { at: now, lastSeen: now, atLeast: !lockSeenBefore };
      this.firstSeen.set(id, entry);
    }
    entry.lastSeen = now;
    return { waitedMs: now - entry.at, atLeast: entry.atLeast };
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < FORGET_AFTER_MS / 4) return;
    this.lastSweep = now;
    for (const [id, entry] of this.firstSeen) if (now - entry.lastSeen > FORGET_AFTER_MS) this.firstSeen.delete(id);
    for (const [lock, at] of this.locksSeen) if (now - at > FORGET_AFTER_MS) this.locksSeen.delete(lock);
  }
}
