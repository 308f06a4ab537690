import type { CancelTimer, Clock } from '../../distributed-lock/src/core/util/clock.js';
import type { EventOwner, Scheduler } from './scheduler.js';

/** The epoch of the simulation's wall clocks (ms since 1970): any fixed instant will do. */
export const SIM_EPOCH_MS = Date.UTC(2026, 10, 27);

/**
 * One simulated process's clock, on the simulation's virtual time. It may run at a rate a little off
 * the true one (`rate`, within the documented drift bound) and start from its own origin; timers set
 * on it fire when its own reading reaches their time. Its timers belong to its process: they wait
 * while the process is paused and vanish with it.
 */
export class ProcessClock implements Clock {
  /** Virtual time at which the process started, and its monotonic reading then. */
  private readonly startedAt: number;

  constructor(
    private readonly scheduler: Scheduler,
    private readonly owner: EventOwner,
    /** Local milliseconds per true millisecond (1 = exact). */
    readonly rate: number,
    /** The monotonic reading at the start (processes do not share an origin). */
    private readonly origin: number,
    /** Its wall clock's error against the true time, in ms. */
    private readonly wallSkewMs: number,
  ) {
    this.startedAt = scheduler.now;
  }

  now(): number {
    return this.origin + (this.scheduler.now - this.startedAt) * this.rate;
  }

  /** The virtual time at which this clock read (or will read) `localMs`. */
  virtualTimeOf(localMs: number): number {
    return this.startedAt + (localMs - this.origin) / this.rate;
  }

  wallNow(): number {
    return SIM_EPOCH_MS + this.scheduler.now * this.rate + this.wallSkewMs;
  }

  setTimer(ms: number, fn: () => void): CancelTimer {
    if (!(ms < Infinity)) return () => undefined;
    // As Node's setTimeout: at least 1 ms (a timer of 0 would let a loop spin without time moving).
    const scheduled = this.scheduler.after(Math.max(1, ms) / this.rate, fn, this.owner);
    return () => scheduled.cancel();
  }

  soon(fn: () => void): CancelTimer {
    const scheduled = this.scheduler.after(0, fn, this.owner);
    return () => scheduled.cancel();
  }

  keepAlive(): CancelTimer {
    return () => undefined;
  }
}
