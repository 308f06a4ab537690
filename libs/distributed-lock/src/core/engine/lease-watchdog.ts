import { every, type CancelTimer, type Clock } from '../util/clock.js';
import type { HeldLock } from './held-locks.js';

/**
 * Renewals started per slice of a round: a process holding 100 000 locks starts its renewals in
 * slices with the event loop's other work between them (a setImmediate each), instead of stalling
 * it for the whole round (seconds at that size), which delayed replies, timers and the renewals'
 * own deadlines.
 */
export const RENEWALS_PER_SLICE = 1000;

/**
 * Renews every lock held without an explicit leaseTime, every `intervalMs` (watchdog timeout / 3).
 * One timer for the whole process, unref'd so it never keeps the process alive; it runs only while
 * there is something to renew. Each lock is renewed on its own: a renewal still in flight (its node
 * slow or failing over) makes the next tick skip that lock only, so locks on healthy nodes keep
 * their leases; the expiry deadline of each lock decides whether it is lost. A round over many
 * locks runs in slices (RENEWALS_PER_SLICE); a round still slicing when the next one is due lets it
 * pass (the locks it has not reached yet are renewed by this one).
 */
export class LeaseWatchdog {
  private readonly locks = new Set<HeldLock>();
  private timer: CancelTimer | undefined;
  /** The next slice of a round still under way. */
  private slice: CancelTimer | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly intervalMs: number,
    /** Renews one lock; reports its own failures, never rejects. */
    private readonly renew: (held: HeldLock) => Promise<void>,
  ) {}

  get size(): number {
    return this.locks.size;
  }

  add(lock: HeldLock): void {
    this.locks.add(lock);
    this.timer ??= every(this.clock, this.intervalMs, () => this.tick());
  }

  delete(lock: HeldLock): void {
    this.locks.delete(lock);
    if (this.locks.size === 0) this.stop();
  }

  stop(): void {
    this.timer?.();
    this.slice?.();
    this.timer = undefined;
    this.slice = undefined;
  }

  private tick(): void {
    if (this.slice) return;
    if (this.locks.size <= RENEWALS_PER_SLICE) {
      for (const lock of this.locks) this.renewUnlessInFlight(lock);
      return;
    }
    const round = [...this.locks];
    const runSlice = (from: number): void => {
      this.slice = undefined;
      const to = Math.min(round.length, from + RENEWALS_PER_SLICE);
      for (let i = from; i < to; i++) {
        const lock = round[i]!;
        // A lock released (or paused) since the round began is no longer in the set.
        if (this.locks.has(lock)) this.renewUnlessInFlight(lock);
      }
      if (to < round.length && this.timer) {
        this.slice = this.clock.soon(() => runSlice(to));
      }
    };
    runSlice(0);
  }

  private renewUnlessInFlight(lock: HeldLock): void {
    if (lock.renewingSince === undefined) void this.renew(lock);
  }
}
