import { monotonicNow } from '../util/clock.js';

export type WaitOutcome = 'notified' | 'timeout' | 'aborted' | 'closed';

/**
 * One caller waiting for one lock in this process. A notification that arrives while the waiter is
 * busy (retrying) is kept, so the next `wait` returns at once: no wake-up is lost between a failed
 * attempt and going back to sleep.
 */
export class Waiter {
  /** A notification not yet consumed by `wait`. */
  pending = false;
  private finish: ((outcome: WaitOutcome) => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  /**
   * `deadline`: monotonic time at which the caller stops waiting (Infinity: never). `shared`: it
   * waits for a shared (read) lock, which the waiters queued right behind it can take at the same time.
   */
  constructor(
    readonly channel: string,
    readonly deadline: number,
    readonly shared = false,
  ) {}

  notify(): void {
    if (this.finish) this.finish('notified');
    else this.pending = true;
  }

  close(): void {
    this.closed = true;
    this.finish?.('closed');
  }

  /**
   * This waiter became the one that must watch the lock's lease: if it sleeps, wake it after at most
   * `ms` (capped by its own deadline). A waiter that is busy sets its own timer when it next sleeps.
   */
  rearm(ms: number): void {
    if (this.finish) this.schedule(Math.min(ms, this.deadline - monotonicNow()));
  }

  /** Sleeps until notified, `ms` elapse (Infinity: no timer), `signal` aborts, or the client closes. */
  wait(ms: number, signal: AbortSignal | undefined): Promise<WaitOutcome> {
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
        clearTimeout(this.timer);
        this.timer = undefined;
        signal?.removeEventListener('abort', onAbort);
        this.finish = undefined;
        resolve(outcome);
      };
      this.finish = finish;
      this.schedule(ms);
    });
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!Number.isFinite(ms)) return;
    const finish = this.finish;
    this.timer = setTimeout(() => finish?.('timeout'), Math.max(0, ms));
    this.timer.unref();
  }
}
