import type { Logger } from '@nestjs/common';
import { isObservable, Observable, type Subscription } from 'rxjs';
import { getLockContext, runInLockContext, runWithCurrentLock, type LockContext } from '../core/internal.js';
import {
  InvalidLockArgumentError,
  LockAcquireAbortedError,
  LockAcquireTimeoutError,
  LockBackendError,
  LockLostError,
  type BaseLock,
  type LockHandle,
} from '../core/index.js';
import type { DistributedLockMetadata } from './distributed-lock.options.js';
import { failureOf, isAnswered, LockedCallFailure } from './lock-failure.answers.js';
import { resolveLockNames } from './lock-name.resolver.js';
import type { AcquireOutcome, LockTracing } from './lock-tracing.js';
import type { LockService } from './lock.service.js';
import type { RequestCall } from './locked-method.js';

/** What a locked call uses of its application's DistributedLockRunner. */
export interface LockedCallPorts {
  readonly locks: LockService;
  readonly logger: Logger;
  /** Spans of acquisitions, when @opentelemetry/api is installed. */
  readonly tracing: LockTracing | undefined;
  /** Releases the call's lock now, or later for lockAtLeastFor; never throws. */
  release(handle: LockHandle, metadata: DistributedLockMetadata, acquiredAt: number): Promise<void>;
}

/**
 * One decorated call, from its names to its release: the names (resolveLockNames), the lock of the
 * metadata's kind (a multi-lock for several names, permits for @DistributedSemaphore) taken in the
 * caller's lock context (a new one if there is none), the method run as that context's owner with the
 * handle as its current lock, and the release once the method's own work has ended: its promise
 * settled, or the Observable a request handler returned ended. The method's promise decides, so an
 * outer interceptor that stops listening early (a timeout) cannot let a second call in while this one
 * still runs.
 *
 * What goes wrong is thrown: to code, the library's error as it is; for a request, a LockedCallFailure,
 * which the request's interceptor turns into its transport's answer. `onLost: 'abort-request'` is the
 * same: the request's answer fails at once while the method runs on, its result dropped.
 */
export class LockedCall {
  /** Settles once the call's lock is released (or was never taken): what shutdown waits for. */
  readonly ended: Promise<void>;
  private end!: () => void;
  /** `onLost: 'abort-request'` on a request: rejects when the lock is lost before the request was answered. */
  private lost: Promise<never> | undefined;
  private abandon: ((failure: LockedCallFailure) => void) | undefined;
  /** The request was answered with the lost lock: what the method gives later is dropped. */
  private abandoned = false;

  constructor(
    private readonly ports: LockedCallPorts,
    private readonly metadata: DistributedLockMetadata,
    private readonly args: unknown[],
    private readonly invoke: (lock: LockHandle) => unknown,
    private readonly request: RequestCall | undefined,
  ) {
    this.ended = new Promise((resolve) => (this.end = resolve));
  }

  /** Runs the call: resolves with the method's result (or what onBusy / onUnavailable give instead). */
  async run(): Promise<unknown> {
    let names: string[];
    try {
      names = resolveLockNames(this.metadata, this.args, this.request?.context, this.request?.scope);
    } catch (error) {
      this.end();
      throw this.toThrow(error, '');
    }
    // The caller's context if there is one (a request, a job scope): nested calls re-enter.
    return runInLockContext(() => this.lockAndRun(getLockContext()!, names));
  }

  private async lockAndRun(context: LockContext, names: string[]): Promise<unknown> {
    const name = names.join(', ');
    const calledAt = this.ports.locks.clock.now();
    let handle: LockHandle;
    try {
      handle = await this.take(names);
    } catch (error) {
      try {
        return await this.notTaken(error, name, this.ports.locks.clock.now() - calledAt);
      } finally {
        this.end();
      }
    }
    const acquiredAt = this.ports.locks.clock.now();
    const stopWatching = this.watchLoss(handle, name);
    const release = async (): Promise<void> => {
      stopWatching();
      await this.ports.release(handle, this.metadata, acquiredAt);
      this.end();
    };
    const work = (async () => runWithCurrentLock(context, handle, () => this.invoke(handle)))();
    const outcome = work.then(
      async (result) => {
        if (this.request && isObservable(result) && !this.abandoned) {
          return holdUntilEnd(result, (subscribe) => runWithCurrentLock(context, handle, subscribe), release, this.lost);
        }
        await release();
        return result;
      },
      async (error: unknown) => {
        await release();
        throw error;
      },
    );
    return this.lost ? Promise.race([outcome, this.lost]) : outcome;
  }

  /** The lock of the metadata's kind over `names`, inside a `lock.acquire` span when OpenTelemetry is present. */
  private take(names: string[]): Promise<LockHandle> {
    const { metadata, ports } = this;
    const options = { leaseTime: metadata.leaseMs, waitTime: metadata.waitMs ?? ports.locks.settings.defaultWaitMs, signal: this.request?.signal };
    const acquire = (): Promise<LockHandle> => {
      const { semaphore } = metadata;
      if (semaphore) {
        if (names.length !== 1) {
          throw new InvalidLockArgumentError(
            `${metadata.decorator} name of ${metadata.where}`,
            'it resolved to several names; a call takes permits of one semaphore.',
          );
        }
        const { queueTimeoutMs } = semaphore;
        const size = { size: semaphore.size, ...(queueTimeoutMs === undefined ? {} : { queueTimeout: queueTimeoutMs }) };
        return ports.locks.getSemaphore(names[0]!, size).acquire(semaphore.perCall, options);
      }
      if (names.length > 1) return ports.locks.getMultiLock(names.map((name) => this.lockOfKind(name))).lock(options);
      return this.lockOfKind(names[0]!).lock(options);
    };
    if (!ports.tracing) return acquire();
    const kind = metadata.semaphore ? 'semaphore' : names.length > 1 ? `multi:${metadata.kind}` : metadata.kind;
    return ports.tracing.traceAcquire(names.join(', '), kind, acquire, outcomeOf);
  }

  private lockOfKind(name: string): BaseLock {
    const { locks } = this.ports;
    switch (this.metadata.kind) {
      case 'fair':
        return locks.getFairLock(name);
      case 'read':
        return locks.getReadWriteLock(name).readLock();
      case 'write':
        return locks.getReadWriteLock(name).writeLock();
      default:
        return locks.getLock(name);
    }
  }

  /** The call's result when the lock was not taken: onBusy, onUnavailable, or the failure thrown. */
  private async notTaken(error: unknown, name: string, waitedMs: number): Promise<unknown> {
    const { metadata, ports } = this;
    if (error instanceof LockAcquireTimeoutError && metadata.onBusy !== 'throw') {
      if (metadata.onBusy === 'skip') {
        ports.logger.debug?.(`${metadata.where} skipped: lock "${name}" is held elsewhere.`);
        return undefined;
      }
      return await metadata.onBusy({ name, waitedMs, error, args: this.args, context: this.request?.context });
    }
    if (error instanceof LockBackendError && metadata.onUnavailable === 'skip') {
      ports.locks.outage.failed(`${metadata.where} skipped`, error, name);
      return undefined;
    }
    throw this.toThrow(error, name);
  }

  /**
   * What to throw for `error`: for a call made by code, the error as it is; for a request, a
   * LockedCallFailure when it is one of the failures a transport answers (busy, unavailable, bad name).
   */
  private toThrow(error: unknown, name: string): unknown {
    const failure = this.request ? failureOf(error) : undefined;
    return failure ? new LockedCallFailure(failure, name, this.request!) : error;
  }

  /**
   * Applies `onLost` when the call's lock is lost while the method runs; the default 'abort' is the
   * handle's signal alone, which aborts anyway, so it adds no listener (nor creates the signal).
   * 'abort-request' on a request that has not been answered yet rejects `lost`; a function is called
   * once (its failures are logged, never thrown: this runs from a timer or a renewal's reply).
   * Returns what stops watching.
   */
  private watchLoss(handle: LockHandle, name: string): () => void {
    const { metadata, request } = this;
    if (metadata.onLost === 'abort' || (metadata.onLost === 'abort-request' && !request)) return () => undefined;
    if (metadata.onLost === 'abort-request') {
      this.lost = new Promise<never>((_, reject) => (this.abandon = reject));
      this.lost.catch(() => undefined); // raced, or not: never an unhandled rejection
    }
    const { signal } = handle;
    const onLost = (): void => {
      const error = signal.reason instanceof LockLostError ? signal.reason : new LockLostError(name, 'lease-expired');
      if (metadata.onLost === 'abort-request') {
        if (isAnswered(request!.context)) return;
        this.abandoned = true;
        this.abandon!(new LockedCallFailure({ kind: 'lost', error }, name, request!));
      } else if (typeof metadata.onLost === 'function') {
        const react = metadata.onLost;
        void (async () => react({ name, error, lock: handle, args: this.args, context: request?.context }))().catch((failure: unknown) =>
          this.ports.logger.error(`onLost of ${metadata.where} failed for lock "${name}": ${(failure as Error)?.message ?? String(failure)}`),
        );
      }
    };
    if (signal.aborted) {
      onLost();
      return () => undefined;
    }
    signal.addEventListener('abort', onLost, { once: true });
    return () => signal.removeEventListener('abort', onLost);
  }
}

function outcomeOf(error: unknown): AcquireOutcome {
  if (error instanceof LockAcquireTimeoutError) return 'timeout';
  if (error instanceof LockAcquireAbortedError) return 'aborted';
  return 'error';
}

/**
 * A request handler's stream, run in the lock's context, with the lock released when it ends: after
 * the release on complete or error (so the answer goes out after it, as for a promise), when the
 * subscriber unsubscribes, or when `lost` rejects ('abort-request': the stream fails with it).
 */
function holdUntilEnd(
  source: Observable<unknown>,
  inLock: (subscribe: () => Subscription) => Subscription,
  release: () => Promise<void>,
  lost: Promise<never> | undefined,
): Observable<unknown> {
  return new Observable<unknown>((subscriber) => {
    let ended = false;
    const end = (notify: () => void): void => {
      if (ended) return;
      ended = true;
      void release().then(notify);
    };
    const inner = inLock(() =>
      source.subscribe({
        next: (value) => subscriber.next(value),
        error: (error: unknown) => end(() => subscriber.error(error)),
        complete: () => end(() => subscriber.complete()),
      }),
    );
    lost?.catch((failure: unknown) => {
      inner.unsubscribe();
      end(() => subscriber.error(failure));
    });
    return () => {
      inner.unsubscribe();
      end(() => undefined);
    };
  });
}
