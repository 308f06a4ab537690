import type { CancelTimer, Clock } from '../core/util/clock.js';

interface Timer {
  readonly at: number;
  /** Order of setting: timers due at the same time fire in the order they were set. */
  readonly seq: number;
  readonly fn: () => void;
  cancelled: boolean;
}

/** Lets every promise that can settle now settle (a turn of Node's event loop). */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * A clock that moves only when told to (`advance`): give it to a lock client (`clock`) and to an
 * in-memory store (`new InMemoryLockStore({ clock })`), and leases, waits, renewals and key expiry run
 * in its time, so a unit test can see a 30 s lease run out in microseconds.
 *
 * ```ts
 * const clock = new ManualClock();
 * const store = new InMemoryLockStore({ clock });
 * const locks = await LockClient.connect({ client: store, clock });
 * const handle = await locks.lock('job', '10s');
 * await clock.advance(10_000);
 * handle.isHeld; // false: the lease ran out
 * ```
 *
 * Timers due at the same time fire in the order they were set; between two timers every promise that
 * can settle settles (one turn of the real event loop), as between two real timers.
 */
export class ManualClock implements Clock {
  private current = 0;
  private sequence = 0;
  private readonly timers: Timer[] = [];

  /** `wallStart`: what `wallNow()` reads at the start (ms since the epoch). */
  constructor(private readonly wallStart = Date.UTC(2026, 0, 1)) {}

  now(): number {
    return this.current;
  }

  wallNow(): number {
    return this.wallStart + this.current;
  }

  setTimer(ms: number, fn: () => void): CancelTimer {
    if (!(ms < Infinity)) return () => undefined;
    return this.add(Math.max(1, ms), fn); // as Node's setTimeout: at least 1 ms
  }

  soon(fn: () => void): CancelTimer {
    return this.add(0, fn);
  }

  private add(ms: number, fn: () => void): CancelTimer {
    const timer: Timer = { at: this.current + ms, seq: this.sequence++, fn, cancelled: false };
    this.insert(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  /** Nothing to keep alive: a test awaits what it started. */
  keepAlive(): CancelTimer {
    return () => undefined;
  }

  /** Timers set and not yet fired or cancelled. */
  get pending(): number {
    return this.timers.filter((timer) => !timer.cancelled).length;
  }

  /**
   * Moves time forward by `ms`, firing every timer due on the way in order (time reads the timer's
   * due time while it runs), and lets promises settle between them. Resolves at the new time.
   */
  async advance(ms: number): Promise<void> {
    const until = this.current + Math.max(0, ms);
    await nextTurn();
    for (;;) {
      const next = this.timers[0];
      if (!next || next.at > until) break;
      this.timers.shift();
      if (next.cancelled) continue;
      this.current = Math.max(this.current, next.at);
      next.fn();
      await nextTurn();
    }
    this.current = until;
    await nextTurn();
  }

  /** Fires what is due now (timers of 0 ms, `soon`), and lets promises settle. */
  settle(): Promise<void> {
    return this.advance(0);
  }

  private insert(timer: Timer): void {
    // Binary search for the first timer due later (or at the same time, set later): timers stay sorted.
    let low = 0;
    let high = this.timers.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const other = this.timers[middle]!;
      if (other.at < timer.at || (other.at === timer.at && other.seq < timer.seq)) low = middle + 1;
      else high = middle;
    }
    this.timers.splice(low, 0, timer);
  }
}
