import type { CancelTimer, Clock } from './clock.js';

interface Pending {
  readonly deadline: number;
  readonly expire: () => void;
}

/** One tracked operation: a link of the list of pending ones (in deadline order). */
interface Pending {
  readonly deadline: number;
  readonly expire: () => void;
  previous: Pending | undefined;
  next: Pending | undefined;
  /** Still in the list (done() of an entry already done or expired changes nothing). */
  tracked: boolean;
}

/**
 * Deadlines of Redis round trips in flight, all with the same timeout, checked by one unref'd timer.
 *
 * A timer per round trip (set, then cleared when the reply comes) costs more than the round trip's
 * own bookkeeping on the hot path. Here an operation costs its entry, linked at the end of a list
 * and unlinked when it is done (no hash table: a small Set or Map allocates a new table each time
 * it empties, which a lone caller makes it do on every round trip); the timer is armed only when it
 * is not already, for the oldest deadline (insertion order is deadline order, since every operation
 * gets the same timeout), and it is left to fire rather than cleared, so a busy client re-arms it at
 * most once per timeout. A deadline is declared one event-loop turn after the timer fires, once
 * pending I/O has been read: after a stall, a reply that did arrive in time wins.
 */
export class OperationDeadlines {
  private first: Pending | undefined;
  private last: Pending | undefined;
  private count = 0;
  private timer: CancelTimer | undefined;
  private stopped = false;

  constructor(
    private readonly timeoutMs: number,
    private readonly clock: Clock,
  ) {}

  /** Tracks an operation; `expire` runs if it is still tracked when the timeout has passed. */
  track(expire: () => void): Pending {
    const entry: Pending = { deadline: this.clock.now() + this.timeoutMs, expire, previous: this.last, next: undefined, tracked: true };
    if (this.last) this.last.next = entry;
    else this.first = entry;
    this.last = entry;
    this.count += 1;
    if (!this.timer && !this.stopped) this.arm(this.timeoutMs);
    return entry;
  }

  done(entry: Pending): void {
    if (!entry.tracked) return;
    entry.tracked = false;
    if (entry.previous) entry.previous.next = entry.next;
    else this.first = entry.next;
    if (entry.next) entry.next.previous = entry.previous;
    else this.last = entry.previous;
    entry.previous = entry.next = undefined;
    this.count -= 1;
  }

  get size(): number {
    return this.count;
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
    for (let entry = this.first; entry; entry = this.first) {
      if (entry.deadline > now) {
        this.arm(entry.deadline - now);
        return;
      }
      this.done(entry);
      entry.expire();
    }
  }
}
