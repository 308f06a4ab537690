import type { CancelTimer, Clock } from './clock.js';

interface Pending {
  readonly deadline: number;
  readonly expire: () => void;
}

/**
 * Deadlines of Redis round trips in flight, all with the same timeout, checked by one unref'd timer.
 *
 * A timer per round trip (set, then cleared when the reply comes) costs more than the round trip's
 * own bookkeeping on the hot path. Here an operation costs a Set insertion and deletion; the timer is
 * armed only when it is not already, for the oldest deadline (insertion order is deadline order, since
 * every operation gets the same timeout), and it is left to fire rather than cleared, so a busy client
 * re-arms it at most once per timeout. A deadline is declared one event-loop turn after the timer
 * fires, once pending I/O has been read: after a stall, a reply that did arrive in time wins.
 */
export class OperationDeadlines {
  private readonly pending = new Set<Pending>();
  private timer: CancelTimer | undefined;
  private stopped = false;

  constructor(
    private readonly timeoutMs: number,
    private readonly clock: Clock,
  ) {}

  /** Tracks an operation; `expire` runs if it is still tracked when the timeout has passed. */
  track(expire: () => void): Pending {
    const entry: Pending = { deadline: this.clock.now() + this.timeoutMs, expire };
    this.pending.add(entry);
    if (!this.timer && !this.stopped) this.arm(this.timeoutMs);
    return entry;
  }

  done(entry: Pending): void {
    this.pending.delete(entry);
  }

  get size(): number {
    return this.pending.size;
  }

  /** Stops the timer; operations still tracked will not expire (the client is closing them itself). */
  stop(): void {
    this.stopped = true;
    this.timer?.();
    this.timer = undefined;
  }

  private arm(ms: number): void {
    this.timer = this.clock.setTimer(ms, () => this.clock.soon(() => this.sweep()));
  }

  private sweep(): void {
    this.timer = undefined;
    if (this.stopped) return;
    const now = this.clock.now();
    for (const entry of this.pending) {
      if (entry.deadline > now) {
        this.arm(entry.deadline - now);
        return;
      }
      this.pending.delete(entry);
      entry.expire();
    }
  }
}
