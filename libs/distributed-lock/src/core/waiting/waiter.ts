import type { CancelTimer, Clock } from '../util/clock.js';

/**
 * Why a wait ended: `notified` (a release, a grant, or someone asking it to look), `timeout` (the
 * pause it asked for elapsed: look again), `deadline` (its own deadline came: the wait is over),
 * `aborted` (the caller's signal), `closed` (the client).
 */
export type WaitOutcome = 'notified' | 'timeout' | 'deadline' | 'aborted' | 'closed';

/**
 * How one waiting caller sleeps (its Place in a LockLine holds the rest). A notification that arrives
 * while the waiter is busy (retrying) is kept, so the next `wait` returns at once: no wake-up is lost
 * between a failed attempt and going back to sleep.
 */
export class Waiter {
  /** A notification not yet consumed by `wait`. */
  pending = false;
  private finish: ((outcome: WaitOutcome) => void) | undefined;
  private timer: CancelTimer | undefined;
  /** Monotonic time the current timer fires at. */
  private timerAt: number | undefined;
  /** A wake-up time asked for while it was busy (see wakeWithin), applied to its next sleep. */
  private wakeBy: number | undefined;
  private closed = false;

  /** `deadline`: monotonic time (on `clock`) at which the caller stops waiting (Infinity: never). */
  constructor(
    readonly deadline: number,
    private readonly clock: Clock,
  ) {}

  /** Asleep in `wait` (not attempting): a release may hand it the lock without racing its attempt. */
  get sleeping(): boolean {
    return this.finish !== undefined;
  }

  notify(): void {
    if (this.finish) this.finish('notified');
    else this.pending = true;
  }

  close(): void {
    this.closed = true;
    this.finish?.('closed');
  }

  /**
   * Wakes it after at most `ms` (only ever shortens its current timer). If it is busy (attempting),
   * its next sleep is shortened instead, so the request is not lost.
   */
  wakeWithin(ms: number): void {
    const at = this.clock.now() + ms;
    if (!this.finish) {
      this.wakeBy = Math.min(this.wakeBy ?? Infinity, at);
      return;
    }
    if (this.timerAt !== undefined && this.timerAt <= at) return;
    this.schedule(Math.min(ms, this.deadline - this.clock.now()), 'notified');
  }

  /**
   * This waiter became the one that must watch the lock's lease: if it sleeps, wake it after at most
   * `ms` (capped by its own deadline; a timer already due sooner stays, such as a fair waiter's
   * refresh of its place in the queue). A waiter that is busy sets its own timer when it next sleeps.
   */
  rearm(ms: number): void {
    if (!this.finish) return;
    if (this.timerAt !== undefined && this.timerAt <= this.clock.now() + ms) return;
    this.schedule(Math.min(ms, this.deadline - this.clock.now()), 'notified');
  }

  /**
   * Sleeps until notified, `ms` elapse (Infinity: no timer), `signal` aborts, or the client closes.
   * 'timeout' means exactly that the `ms` asked for here elapsed; an earlier wake-up asked for by
   * someone else (wakeWithin, rearm) comes back as 'notified', a reason to look; a timer that ends at
   * the waiter's own deadline, whoever set it, comes back as 'deadline'.
   */
  wait(ms: number, signal: AbortSignal | undefined): Promise<WaitOutcome> {
    let early = false;
    if (this.wakeBy !== undefined) {
      const by = Math.max(0, this.wakeBy - this.clock.now());
      early = by < ms;
      ms = Math.min(ms, by);
      this.wakeBy = undefined;
    }
    if (this.closed) return Promise.resolve('closed');
    if (signal?.aborted) return Promise.resolve('aborted');
    if (this.pending) {
      this.pending = false;
      return Promise.resolve('notified');
    }
    return new Promise<WaitOutcome>((resolve) => {
      const onAbort = (): void => finish('aborted');
      signal?.addEventListener('abort', onAbort, { once: true });
      const finish = (outcome: WaitOutcome): void => {
        this.timer?.();
        this.timer = undefined;
        this.timerAt = undefined;
        signal?.removeEventListener('abort', onAbort);
        this.finish = undefined;
        resolve(outcome);
      };
      this.finish = finish;
      this.schedule(ms, early ? 'notified' : 'timeout');
    });
  }

  private schedule(ms: number, outcome: 'timeout' | 'notified'): void {
    this.timer?.();
    this.timer = undefined;
    this.timerAt = undefined;
    if (!Number.isFinite(ms)) return;
    const finish = this.finish;
    this.timerAt = this.clock.now() + Math.max(0, ms);
    const reason = this.timerAt >= this.deadline ? 'deadline' : outcome;
    this.timer = this.clock.setTimer(ms, () => finish?.(reason));
  }
}
