import { Injectable, Logger } from '@nestjs/common';
import { isObservable, Observable, type Subscription } from 'rxjs';
import {
  getLockContext,
  InvalidLockArgumentError,
  LockAcquireAbortedError,
  LockAcquireTimeoutError,
  LockBackendError,
  LockLostError,
  runInLockContext,
  type LockHandle,
} from '../core/index.js';
import { runWithCurrentLock } from '../core/context/lock-context.js';
import { afterTimeout, settleWithin } from '../core/util/late-timer.js';
import { assertLockName } from '../core/util/validate.js';
import { takeDecoratedLock, decoratedKind } from './decorated-lock.js';
import { MULTI_KEY_SEPARATOR } from './distributed-lock.constants.js';
import type { DistributedLockMetadata, LockedCallInfo } from './distributed-lock.options.js';
import { LockKeyTemplate } from './lock-key.template.js';
import { loadLockTracing, type AcquireOutcome, type LockTracing } from './lock-tracing.js';
import { LockService } from './lock.service.js';
import type { LockedMethodRunner, RouteCallContext } from './locked-method.js';

/**
 * What decorated calls share within one application: taking a lock for a metadata (with its span),
 * releasing it (or deferring the release for lockAtLeastFor), the failure strategies, and the count
 * of calls in flight that shutdown waits for.
 */
@Injectable()
export class DistributedLockRunner implements LockedMethodRunner {
  private readonly logger = new Logger('DistributedLock');
  private tracing: LockTracing | undefined;
  private inFlight = 0;
  private readonly idle = new Set<() => void>();
  /** Releases deferred by lockAtLeastFor: handle -> cancels its timer. */
  private readonly deferred = new Map<LockHandle, () => void>();
  private shuttingDown = false;

  constructor(readonly locks: LockService) {}

  /** Loads the optional OpenTelemetry API (no-op when it is not installed). */
  async init(): Promise<void> {
    this.tracing = await loadLockTracing();
  }

  /** Decorated calls running right now (interceptor and method wrapper). */
  get activeCalls(): number {
    return this.inFlight;
  }

  /** Counts a decorated call as in flight until the returned function is called (idempotent). */
  begin(): () => void {
    this.inFlight += 1;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.inFlight -= 1;
      if (this.inFlight === 0) for (const resolve of [...this.idle]) resolve();
    };
  }

  /** Takes the lock of a decorated call, inside a `lock.acquire` span when OpenTelemetry is present. */
  acquire(metadata: DistributedLockMetadata, name: string, waitMs: number, signal: AbortSignal | undefined): Promise<LockHandle> {
    const run = (): Promise<LockHandle> => takeDecoratedLock(this.locks, metadata, name, { waitMs, signal });
    return this.tracing ? this.tracing.traceAcquire(name, decoratedKind(metadata), run, outcomeOf) : run();
  }

  waitMsOf(metadata: DistributedLockMetadata): number {
    return metadata.waitMs ?? this.locks.settings.defaultWaitMs;
  }

  /**
   * Releases a decorated call's lock, or, with lockAtLeastFor, keeps it until that long after it was
   * acquired (an unref'd timer; shutdown releases such locks at once). Failures are logged, never
   * thrown: the call's own outcome stands, and the lock's lease bounds the damage.
   */
  async release(handle: LockHandle, metadata: DistributedLockMetadata, acquiredAt: number): Promise<void> {
    if (!handle.isHeld) return; // lost, or released by shutdown
    const keepFor = metadata.lockAtLeastMs === undefined ? 0 : metadata.lockAtLeastMs - (performance.now() - acquiredAt);
    if (keepFor > 0 && !this.shuttingDown) {
      const cancel = afterTimeout(keepFor, () => {
        this.deferred.delete(handle);
        void this.unlockQuietly(handle);
      });
      this.deferred.set(handle, cancel);
      return;
    }
    await this.unlockQuietly(handle);
  }

  /** The result of a call whose lock stayed busy, per its onLocked strategy ('throw' is handled by the caller). */
  async whenLocked(metadata: DistributedLockMetadata, info: LockedCallInfo): Promise<unknown> {
    if (metadata.onLocked === 'skip') {
      this.logger.debug?.(`${metadata.where} skipped: lock "${info.name}" is held elsewhere.`);
      return undefined;
    }
    if (typeof metadata.onLocked === 'function') return await metadata.onLocked(info);
    throw info.error;
  }

  /**
   * Every decorated call, route or provider: the name (from the request through the interceptor, or
   * from the arguments), then lock, run, release once the method's work has ended. The method's own
   * promise decides that, so an outer interceptor that stops listening early (a timeout) cannot let a
   * second call in while this one still runs. A route handler that returns an Observable holds the
   * lock until the stream completes, errors, or is unsubscribed (Nest subscribes to it).
   */
  async runLocked(
    metadata: DistributedLockMetadata,
    args: unknown[],
    invoke: (lock: LockHandle) => unknown,
    route: RouteCallContext | undefined,
  ): Promise<unknown> {
    const done = this.begin();
    let streaming = false;
    try {
      let name: string;
      try {
        name = route?.name ?? this.nameFromArgs(metadata, args);
      } catch (error) {
        throw route ? route.mapError(error, '') : error;
      }
      // The caller's context if there is one (a request, a job scope): nested calls re-enter.
      return await runInLockContext(async () => {
        const context = getLockContext()!;
        const calledAt = performance.now();
        let handle: LockHandle;
        try {
          handle = await this.acquire(metadata, name, this.waitMsOf(metadata), route?.signal);
        } catch (error) {
          if (error instanceof LockAcquireTimeoutError && metadata.onLocked !== 'throw') {
            return await this.whenLocked(metadata, { name, waitedMs: performance.now() - calledAt, error, args, context: route?.context });
          }
          if (error instanceof LockBackendError && metadata.onUnavailable === 'skip') {
            this.locks.outage.failed(`${metadata.where} skipped`, error, name);
            return undefined;
          }
          throw route ? route.mapError(error, name) : error;
        }
        const acquiredAt = performance.now();
        // onLost other than the default 'abort' (the handle's signal, which aborts anyway): watched
        // until the release, so the default path adds no listener (nor creates the signal).
        const stopWatching = metadata.onLost === 'abort' ? undefined : this.watchLoss(metadata, handle, name, args, route);
        const release = (): Promise<void> => {
          stopWatching?.();
          return this.release(handle, metadata, acquiredAt);
        };
        let result: unknown;
        try {
          result = await runWithCurrentLock(context, handle, () => invoke(handle));
        } catch (error) {
          await release();
          throw error;
        }
        if (route && isObservable(result)) {
          streaming = true;
          return holdUntilEnd(result, (subscribe) => runWithCurrentLock(context, handle, subscribe), release, done);
        }
        await release();
        return result;
      });
    } finally {
      if (!streaming) done();
    }
  }

  /**
   * Shutdown, first step: releases the locks kept for lockAtLeastFor, and waits for decorated calls in
   * flight to finish (their locks are released as they end), both up to `timeoutMs`. True if no call
   * was left. What is still unreleased then is released by the client's close().
   */
  async drain(timeoutMs: number): Promise<boolean> {
    this.shuttingDown = true;
    const deferred = [...this.deferred.entries()];
    this.deferred.clear();
    const released = Promise.all(
      deferred.map(([handle, cancel]) => {
        cancel();
        return this.unlockQuietly(handle);
      }),
    );
    let resolveIdle!: () => void;
    const idle = new Promise<void>((resolve) => {
      resolveIdle = resolve;
    });
    if (this.inFlight === 0) resolveIdle();
    else this.idle.add(resolveIdle);
    const finished = await settleWithin(
      Promise.all([idle, released]).then(() => true),
      timeoutMs,
      () => false,
    );
    this.idle.delete(resolveIdle);
    if (!finished && this.inFlight > 0) {
      this.logger.warn(
        `${this.inFlight} locked call(s) still running after the shutdown timeout (${timeoutMs} ms); their locks are released now and their lost-lease signals abort.`,
      );
    }
    return this.inFlight === 0;
  }

  /**
   * Applies `onLost` when the call's lock is lost while the method runs: answers the request
   * ('abort-request', routes), or calls the function once (its failures are logged, never thrown:
   * this runs from a timer or a renewal's reply). Returns what stops watching.
   */
  private watchLoss(metadata: DistributedLockMetadata, handle: LockHandle, name: string, args: unknown[], route: RouteCallContext | undefined): () => void {
    const { signal } = handle;
    const onLost = (): void => {
      const error = signal.reason instanceof LockLostError ? signal.reason : new LockLostError(name, 'lease-expired');
      if (metadata.onLost === 'abort-request') {
        route?.abortRequest(error);
      } else if (typeof metadata.onLost === 'function') {
        const react = metadata.onLost;
        void (async () => react({ name, error, lock: handle, args, context: route?.context }))().catch((failure: unknown) =>
          this.logger.error(`onLost of ${metadata.where} failed for lock "${name}": ${(failure as Error)?.message ?? String(failure)}`),
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

  private nameFromArgs(metadata: DistributedLockMetadata, args: unknown[]): string {
    let name: unknown;
    if (metadata.keyFromArgs) {
      name = metadata.keyFromArgs(...args);
      // Several names: a multi-lock, resolved like a multi-key template.
      if (Array.isArray(name)) {
        (name as unknown[]).forEach((part, i) => assertLockName(part, `@DistributedLock key ${i} of ${metadata.where}`));
        name = name.join(MULTI_KEY_SEPARATOR);
      }
    } else if (metadata.key instanceof LockKeyTemplate && metadata.key.source !== 'request') name = metadata.key.resolveArgs(args);
    else {
      const what =
        metadata.key instanceof LockKeyTemplate ? `template "${metadata.key.template}" reads the request` : 'key function takes the ExecutionContext';
      throw new InvalidLockArgumentError(
        '@DistributedLock key',
        `the ${what}, but ${metadata.where} was called outside a request handled by Nest. Use keyFromArgs or an {args.N} template for methods that are not route handlers.`,
      );
    }
    assertLockName(name, `@DistributedLock key of ${metadata.where}`);
    return name;
  }

  private async unlockQuietly(handle: LockHandle): Promise<void> {
    if (!handle.isHeld) return;
    try {
      await handle.unlock();
    } catch (error) {
      if (error instanceof LockBackendError) this.locks.outage.failed('release after a locked call', error, handle.name);
      else this.logger.warn(`Releasing lock "${handle.name}" after a locked call failed: ${(error as Error).message}`);
    }
  }
}

function outcomeOf(error: unknown): AcquireOutcome {
  if (error instanceof LockAcquireTimeoutError) return 'timeout';
  if (error instanceof LockAcquireAbortedError) return 'aborted';
  return 'error';
}

/**
 * A route handler's stream, run in the lock's context, with the lock released when it ends: after the
 * release on complete or error (so the response goes out after it, as for a promise), or when the
 * subscriber unsubscribes. `done` ends the call's count for shutdown.
 */
function holdUntilEnd(
  source: Observable<unknown>,
  inLock: (subscribe: () => Subscription) => Subscription,
  release: () => Promise<void>,
  done: () => void,
): Observable<unknown> {
  return new Observable<unknown>((subscriber) => {
    let ended = false;
    const end = (notify: () => void): void => {
      if (ended) return;
      ended = true;
      void release().then(() => {
        done();
        notify();
      });
    };
    const inner = inLock(() =>
      source.subscribe({
        next: (value) => subscriber.next(value),
        error: (error: unknown) => end(() => subscriber.error(error)),
        complete: () => end(() => subscriber.complete()),
      }),
    );
    return () => {
      inner.unsubscribe();
      end(() => undefined);
    };
  });
}
