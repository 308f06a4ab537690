import { circuitRefusal } from '../connection/not-executed.js';
import { LockBackendError } from '../errors/lock-backend.error.js';
import { LockCircuitOpenError } from '../errors/lock-circuit-open.error.js';
import type { Clock } from '../util/clock.js';
import { OperationDeadlines } from '../util/operation-deadlines.js';

/** Thrown when a round trip is given up (operation timeout, or the caller's abort). */
export class AbandonedOperation extends Error {
  constructor(readonly why: 'timeout' | 'aborted') {
    super(why);
  }
}

/**
 * Redis round trips of lock operations, each bounded by the operation timeout (one shared deadline
 * timer, see OperationDeadlines) and, optionally, by the caller's AbortSignal. The one place that
 * says what a round trip without a reply becomes: `cause()` and `failure()`.
 */
export class RoundTrips {
  private readonly deadlines: OperationDeadlines;

  constructor(
    readonly timeoutMs: number,
    readonly clock: Clock,
  ) {
    this.deadlines = new OperationDeadlines(timeoutMs, clock);
  }

  /**
   * Resolves with the reply, or rejects with AbandonedOperation once the operation timeout passes or
   * `signal` aborts. The operation itself keeps running: callers decide what to do with a late reply.
   */
  bounded<T>(operation: Promise<T>, signal?: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let onAbort: (() => void) | undefined;
      /** Settles once, whichever comes first: the reply, the deadline, the abort. */
      const finish = (settle: () => void): void => {
        this.deadlines.done(entry);
        if (onAbort) signal!.removeEventListener('abort', onAbort);
        settle();
      };
      const entry = this.deadlines.track(() => finish(() => reject(new AbandonedOperation('timeout'))));
      if (signal) {
        onAbort = () => finish(() => reject(new AbandonedOperation('aborted')));
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      }
      operation.then(
        (value) => finish(() => resolve(value)),
        (error: unknown) => finish(() => reject(error)),
      );
    });
  }

  /** What went wrong, as an Error: a round trip given up on becomes "no reply within N ms". */
  cause(error: unknown): Error {
    if (error instanceof AbandonedOperation) return new Error(`no reply within ${this.timeoutMs} ms`);
    return error instanceof Error ? error : new Error(String(error));
  }

  /** The LockBackendError of a failed `operation` on lock `name` (LockCircuitOpenError when a circuit breaker refused it). */
  failure(operation: string, name: string, error: unknown): LockBackendError {
    const refused = circuitRefusal(error);
    if (refused) return new LockCircuitOpenError(operation, name, refused.circuit!.node, refused.circuit!.retryAfterMs, refused);
    return new LockBackendError(operation, name, this.cause(error));
  }

  /** Stops the deadline timer: round trips still in flight will not be given up (the client is closing them). */
  stop(): void {
    this.deadlines.stop();
  }
}
