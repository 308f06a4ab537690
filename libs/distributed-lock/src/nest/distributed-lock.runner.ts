import { Injectable, Logger } from '@nestjs/common';
import { isObservable } from 'rxjs';
import { InvalidLockArgumentError, InvalidLockConfigError, LockAcquireTimeoutError, LockBackendError, type BaseLock, type LockHandle } from '../core/index.js';
import { getLockContext, runInLockContext, runWithCurrentLock, settleWithin, type LockContext } from '../core/internal.js';
import { DeferredReleases } from './deferred-releases.js';
import type { DistributedLockMetadata } from './distributed-lock.options.js';
import { failureOf, LockedCallFailure } from './lock-failure.answers.js';
import { watchLoss } from './lock-loss.watcher.js';
import { resolveLockNames } from './lock-name.resolver.js';
import { loadLockTracing, type LockTracing } from './lock-tracing.js';
import { LockService } from './lock.service.js';
import { CURRENT_LOCK_PENDING, requestCalls, type LockedMethodRunner, type RequestCall } from './request-call.js';
import { holdUntilEnd } from './locked-stream.js';

/** Instance -> the runner of the application that created it (bound at start-up by the explorer). */
const bindings = new WeakMap<object, DistributedLockRunner>();

/** Makes the decorated methods of `instance` lock through `runner` (one Nest application's DistributedLockRunner). */
export function bindLockedInstance(instance: object, runner: DistributedLockRunner): void {
  bindings.set(instance, runner);
}

/**
 * The function a decorated method becomes (see createLockedMethod, locked-method.ts): each call takes
 * the lock through the runner of the instance's application (or, for a request-scoped controller, the
 * request's), with the request call DistributedLockInterceptor set up when Nest handles a request.
 */
export function lockedMethod(original: (...args: unknown[]) => unknown, metadata: DistributedLockMetadata): (...args: unknown[]) => unknown {
  return function wrapper(this: object, ...args: unknown[]): unknown {
    const current = requestCalls.getStore();
    const request = current?.metadata === metadata ? current : undefined;
    // Code the method calls must not look like this request (a nested decorated call locks itself).
    // `@CurrentLock()` parameters were resolved before the lock was taken: they get the handle now.
    const invoke = (lock: LockHandle): unknown =>
      requestCalls.exit(() =>
        original.apply(
          this,
          args.map((arg) => (arg === CURRENT_LOCK_PENDING ? lock : arg)),
        ),
      );
    const runner = bindings.get(this) ?? request?.runner;
    if (!runner) {
      return Promise.reject(
        new InvalidLockConfigError(
          'DistributedLockModule',
          `${metadata.where} is decorated with a lock, but this instance was not created by a Nest application that imports ` +
            'DistributedLockModule, or it is request-scoped, or it is called before the application initialised. ' +
            'Create it through Nest (a provider of a module), and call it once app.init() has run.',
        ),
      );
    }
    return runner.run(metadata, args, invoke, request);
  };
}

/**
 * Runs the decorated calls of one application, each as a LockedCall (its names, its lock, its
 * release), and keeps what shutdown needs: the calls in flight, and the locks kept for
 * lockAtLeastFor (released later by an unref'd timer, at once on shutdown).
 */
@Injectable()
export class DistributedLockRunner implements LockedMethodRunner {
  /** @internal */
  readonly logger = new Logger('DistributedLock');
  /** @internal Spans of acquisitions, when @opentelemetry/api is installed (see init). */
  tracing: LockTracing | undefined;
  /** Calls in flight: each settles once its lock is released (or was never taken). */
  private readonly inFlight = new Set<Promise<void>>();
  /** Locks kept for lockAtLeastFor. */
  private readonly deferred: DeferredReleases;
  private shuttingDown = false;

  /** @internal */
  readonly locks: LockService;

  constructor(locks: LockService) {
    this.locks = locks;
    this.deferred = new DeferredReleases(locks.clock, (handle) => this.unlockQuietly(handle));
  }

  /** Loads the optional OpenTelemetry API (no spans when it is not installed). Called by DistributedLockModule at start-up. */
  async init(): Promise<void> {
    this.tracing = await loadLockTracing(this.locks.clock);
  }

  /** One decorated call (used by the method wrapper, lockedMethod): takes the lock, runs `invoke`, releases. */
  run(metadata: DistributedLockMetadata, args: unknown[], invoke: (lock: LockHandle) => unknown, request: RequestCall | undefined): Promise<unknown> {
    const call = new LockedCall(this, metadata, args, invoke, request);
    this.inFlight.add(call.ended);
    void call.ended.then(() => this.inFlight.delete(call.ended));
    return call.run();
  }

  /**
   * Shutdown, first step (DistributedLockModule.beforeApplicationShutdown): releases the locks kept
   * for lockAtLeastFor, and waits for decorated calls in flight to finish (their locks are released
   * as they end), both up to `timeoutMs`. True if no call was left. What is still unreleased then is
   * released by the client's close().
   */
  async drain(timeoutMs: number): Promise<boolean> {
    this.shuttingDown = true;
    const released = this.deferred.releaseAll();
    const idle = (async () => {
      while (this.inFlight.size > 0) await Promise.all(this.inFlight); // calls may still start meanwhile
    })();
    const finished = await settleWithin(
      this.locks.clock,
      Promise.all([idle, released]).then(() => true),
      timeoutMs,
      () => false,
    );
    if (!finished && this.inFlight.size > 0) {
      this.logger.warn(
        `${this.inFlight.size} locked call(s) still running at the end of the shutdown timeout (shutdownTimeout, ${this.locks.settings.shutdownTimeoutMs} ms); their locks are released now and their lost-lease signals abort.`,
      );
    }
    return this.inFlight.size === 0;
  }

  /**
   * @internal Releases a call's lock, or, with lockAtLeastFor, keeps it until that long after it was acquired
   * (an unref'd timer; shutdown releases such locks at once). Failures are logged, never thrown: the
   * call's own outcome stands, and the lock's lease bounds the damage.
   */
  async release(handle: LockHandle, metadata: DistributedLockMetadata, acquiredAt: number): Promise<void> {
    // Not `!isHeld`: a lease that ran out here while a renewal was on its way reads as not held, and
    // the renewal may keep the lock, renewed by the watchdog for good (see LockHandle.releaseUnlessOver).
    if (handle.signal.aborted) return; // lost, or released by shutdown
    const keepFor = metadata.lockAtLeastMs === undefined ? 0 : metadata.lockAtLeastMs - (this.locks.clock.now() - acquiredAt);
    if (keepFor > 0 && !this.shuttingDown) return this.deferred.defer(handle, keepFor);
    await this.unlockQuietly(handle);
  }

  private async unlockQuietly(handle: LockHandle): Promise<void> {
    try {
      await handle.releaseUnlessOver();
    } catch (error) {
      if (error instanceof LockBackendError) this.locks.outage.failed('release after a locked call', error, handle.name);
      else this.logger.warn(`Releasing lock "${handle.name}" after a locked call failed: ${(error as Error).message}`);
    }
  }
}

/**
 * One decorated call, from its names to its release: the names (resolveLockNames), the lock of the
 * metadata's kind (a multi-lock for several names, permits for @DistributedSemaphore) taken in the
 * caller's lock context (a new one if there is none), the method run as that context's owner with the
 * handle as its current lock, and the release once the method's own work has ended: its promise
 * settled, or the Observable a request handler returned ended (locked-stream.ts). The method's promise
 * decides, so an outer interceptor that stops listening early (a timeout) cannot let a second call in
 * while this one still runs.
 *
 * What goes wrong is thrown: to code, the library's error as it is; for a request, a LockedCallFailure,
 * which the request's interceptor turns into its transport's answer. `onLost: 'abort-request'` is the
 * same (lock-loss.watcher.ts): the request's answer fails at once while the method runs on, its result
 * dropped.
 */
class LockedCall {
  /** Settles once the call's lock is released (or was never taken): what shutdown waits for. */
  readonly ended: Promise<void>;
  private end!: () => void;
  readonly logger: Logger;

  constructor(
    private readonly runner: DistributedLockRunner,
    readonly metadata: DistributedLockMetadata,
    readonly args: unknown[],
    private readonly invoke: (lock: LockHandle) => unknown,
    readonly request: RequestCall | undefined,
  ) {
    this.ended = new Promise((resolve) => (this.end = resolve));
    this.logger = runner.logger;
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
    const { clock } = this.runner.locks;
    const name = names.join(', ');
    const calledAt = clock.now();
    let handle: LockHandle;
    try {
      handle = await this.take(names);
    } catch (error) {
      try {
        return await this.notTaken(error, name, clock.now() - calledAt);
      } finally {
        this.end();
      }
    }
    const acquiredAt = clock.now();
    // onLost: the default ('abort') is the handle's signal alone; anything else is watched.
    const { onLost } = this.metadata;
    const loss = onLost === 'abort' ? undefined : watchLoss(onLost, handle, name, this);
    const release = async (): Promise<void> => {
      loss?.stop();
      await this.runner.release(handle, this.metadata, acquiredAt);
      this.end();
    };
    const work = (async () => runWithCurrentLock(context, handle, () => this.invoke(handle)))();
    const outcome = work.then(
      async (result) => {
        if (this.request && isObservable(result) && !loss?.abandoned) {
          return holdUntilEnd(result, (subscribe) => runWithCurrentLock(context, handle, subscribe), release, loss?.lost);
        }
        await release();
        return result;
      },
      async (error: unknown) => {
        await release();
        throw error;
      },
    );
    return loss?.lost ? Promise.race([outcome, loss.lost]) : outcome;
  }

  /** The lock of the metadata's kind over `names`, inside a `lock.acquire` span when OpenTelemetry is present. */
  private take(names: string[]): Promise<LockHandle> {
    const { metadata } = this;
    const { locks, tracing } = this.runner;
    const options = { leaseTime: metadata.leaseMs, waitTime: metadata.waitMs ?? locks.settings.defaultWaitMs, signal: this.request?.signal };
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
        return locks.getSemaphore(names[0]!, size).acquire(semaphore.perCall, options);
      }
      if (names.length > 1) return locks.getMultiLock(names.map((name) => this.lockOfKind(name))).lock(options);
      return this.lockOfKind(names[0]!).lock(options);
    };
    if (!tracing) return acquire();
    const kind = metadata.semaphore ? 'semaphore' : names.length > 1 ? `multi:${metadata.kind}` : metadata.kind;
    return tracing.traceAcquire(names.join(', '), kind, acquire);
  }

  private lockOfKind(name: string): BaseLock {
    const { locks } = this.runner;
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
    const { metadata } = this;
    if (error instanceof LockAcquireTimeoutError && metadata.onBusy !== 'throw') {
      if (metadata.onBusy === 'skip') {
        this.logger.debug?.(`${metadata.where} skipped: lock "${name}" is held elsewhere.`);
        return undefined;
      }
      return await metadata.onBusy({ name, waitedMs, error, args: this.args, context: this.request?.context });
    }
    if (error instanceof LockBackendError && metadata.onUnavailable === 'skip') {
      this.runner.locks.outage.failed(`${metadata.where} skipped`, error, name);
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
}
