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
  private closed = false;

  constructor(readonly channel: string) {}

  notify(): void {
    if (this.finish) this.finish('notified');
    else this.pending = true;
  }

  close(): void {
    this.closed = true;
    this.finish?.('closed');
  }

  /** Sleeps until notified, `ms` elapse, `signal` aborts, or the client closes. */
  wait(ms: number, signal: AbortSignal | undefined): Promise<WaitOutcome> {
    if (this.closed) return Promise.resolve('closed');
    if (signal?.aborted) return Promise.resolve('aborted');
    if (this.pending) {
      this.pending = false;
      return Promise.resolve('notified');
    }
    return new Promise<WaitOutcome>((resolve) => {
      const onAbort = (): void => finish('aborted');
      const timer = setTimeout(() => finish('timeout'), Math.max(0, ms));
      timer.unref();
      signal?.addEventListener('abort', onAbort, { once: true });
      const finish = (outcome: WaitOutcome): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.finish = undefined;
        resolve(outcome);
      };
      this.finish = finish;
    });
  }
}
