import { getLockContext } from '../context/lock-context.js';
import { LockAcquireAbortedError } from '../errors/lock-acquire-aborted.error.js';
import { DistributedLockError } from '../errors/distributed-lock.error.js';
import { LockBackendError } from '../errors/lock-backend.error.js';
import { LockClientClosedError } from '../errors/lock-client-closed.error.js';
import { LockNotHeldError } from '../errors/lock-not-held.error.js';
import type { LockKind } from '../events/lock-events.js';
import type { ReplicaAck } from '../config/replica-ack.js';
import type { LeaseResource, RenewResult } from '../lock/lease-resource.js';
import { AbandonedOperation, type LockEngine, type Owner } from '../lock/lock-engine.js';
import type { AcquiredLock, LockHandle } from '../lock/lock-handle.js';
import { monotonicNow } from '../util/clock.js';
import { afterTimeout } from '../util/late-timer.js';
import { lockRequest, tryLockRequest, type AcquireRequest, type LockOptions, type TryLockOptions } from './acquire-options.js';
import type { Duration } from '../util/duration.js';
import { withLockOn } from './with-lock.js';

/** A grant is valid for `validityMs` from the start of its attempt (default: the whole lease). */
export type Grant = { acquired: true; token: number; holds: number; validityMs?: number };
export type AttemptResult = Grant | { acquired: false; ttl: number };

/** What one acquisition is for: who, how long, renewed or not, confirmed how. */
interface Terms {
  owner: string;
  /** Taken outside any lock context (see LockEngine.byName). */
  outsideContext: boolean;
  leaseMs: number;
  watchdog: boolean;
  replicaAck: ReplicaAck | undefined;
  signal: AbortSignal | undefined;
  /** The caller is willing to wait (a fair lock queues it on a failed attempt). */
  willWait: boolean;
  /** The caller is in this process's queue of waiters for the lock. */
  queued: boolean;
  /** An attempt failed with an unknown outcome: it may have been granted without our knowing. */
  uncertain: boolean;
}

/** Retry pause after a Redis error while waiting: doubles from 50 ms up to 1 s. */
const ERROR_BACKOFF_MS = [50, 100, 200, 400, 800, 1000];
/** Pause when the lock exists without an expiry (should not happen with this library's keys). */
const NO_TTL_PAUSE_MS = 100;

/**
 * The acquire / wait / release protocol shared by the lock kinds. A kind supplies the one-round-trip
 * attempt, renewal and release scripts; the base does ownership, waiting without polling, deadlines,
 * cancellation and bookkeeping.
 */
export abstract class BaseLock implements LeaseResource {
  abstract readonly kind: LockKind;
  /** The lock's key: `<prefix>{name}` plus the kind's variant suffix. */
  readonly id: string;
  /** The fencing-token counter, in the lock's slot. */
  protected readonly fenceKey: string;
  /** Channel the release script publishes on. */
  readonly channel: string;

  /**
   * Waiters of a shared (read) lock: when one takes it, those queued right behind it in this process
   * are woken together instead of one release at a time.
   */
  protected readonly shared: boolean = false;
  /**
   * Longest a waiter sleeps without asking Redis again, even when no release or lease end is due: a
   * fair lock's waiters must keep their place in the Redis queue alive (Infinity: no such need).
   */
  protected get maxPauseMs(): number {
    return Infinity;
  }

  /** `variant`: key suffix of kinds whose state must not mix with a plain lock of the same name. */
  protected constructor(
    protected readonly engine: LockEngine,
    readonly name: string,
    variant = '',
  ) {
    this.id = engine.keys.lock(name, variant);
    this.fenceKey = engine.keys.fence(name);
    this.channel = engine.keys.channel(name, variant);
  }

  /**
   * One acquisition attempt. With `replicaAck`, a grant must be confirmed by that many replicas or be
   * undone (ReplicaAckError). `willWait`: the caller waits if this attempt fails.
   */
  protected abstract attempt(
    owner: string,
    leaseMs: number,
    replicaAck: ReplicaAck | undefined,
    willWait: boolean,
    queued: boolean,
  ): Promise<AttemptResult>;
  /** Kinds that hand over (see `handsOver`): the last caller of this process stopped waiting without the lock. */
  protected unmark?(): Promise<void>;
  /**
   * The acquisition ended without the lock (timeout, abort, error) and this owner has no other one in
   * flight: drop whatever the attempts left behind for it (a fair lock's queue entry). Best effort.
   */
  protected abandon(_owner: string): Promise<void> {
    return Promise.resolve();
  }
  abstract renew(owner: string, leaseMs: number, replicaAck: ReplicaAck | undefined): Promise<RenewResult>;
  abstract release(owner: string, all: boolean, expectedHolds?: number): Promise<number>;
  /** See LeaseResource. Plain locks only; the fair lock keeps its own queue in Redis. */
  get handsOver(): boolean {
    return false;
  }
  /** Kinds that hand over: release `owner`'s last hold and grant the lock to `successor` in one step (see LeaseResource). */
  handOver?(owner: string, successor: string, leaseMs: number, yieldToOthers: boolean, successorIsLast: boolean): Promise<[number, number]>;
  /** Sets `owner`'s holds to `holds` if it is the owner (corrects phantom holds, see `granted`). */
  protected abstract adjustHolds(owner: string, holds: number): Promise<void>;

  /** Whether anyone holds the lock. */
  abstract isLocked(): Promise<boolean>;
  /** How many times the current lock context holds it (0 when not held or outside any context). */
  abstract getHoldCount(): Promise<number>;
  /** Remaining lease in ms; -2 when not locked, -1 when locked without expiry (Redis PTTL). */
  abstract remainTimeToLive(): Promise<number>;
  /** Deletes the lock whoever holds it and wakes a waiter. True if there was a lock to delete. */
  abstract forceUnlock(): Promise<boolean>;

  /** Whether the current lock context holds it (Redisson: isHeldByCurrentThread). */
  async isHeldByCurrentContext(): Promise<boolean> {
    return (await this.getHoldCount()) > 0;
  }

  /**
   * Acquires, waiting as long as it takes (Redisson `lock()`); with `waitTime`, throws
   * LockAcquireTimeoutError when the wait is over.
   */
  async lock(leaseTimeOrOptions?: Duration | LockOptions): Promise<LockHandle> {
    const request = lockRequest(leaseTimeOrOptions);
    const outcome = await this.acquire(this.engine.currentOwner(), request);
    if ('ttl' in outcome) throw this.engine.timeoutError(this.name, request.waitMs, outcome.ttl);
    return outcome;
  }

  /** Acquires if possible within `waitTime` (default: no wait); resolves false otherwise. */
  async tryLock(waitTimeOrOptions?: Duration | TryLockOptions, leaseTime?: Duration): Promise<LockHandle | false> {
    const request = tryLockRequest(waitTimeOrOptions, leaseTime);
    const outcome = await this.acquire(this.engine.currentOwner(), request);
    return 'ttl' in outcome ? false : outcome;
  }

  /**
   * Runs `fn` under this lock and always releases it; `fn` gets the handle (token, signal), and code
   * it calls is the same owner, so it may re-enter.
   */
  withLock<T>(fn: (lock: LockHandle) => T | Promise<T>, options?: LockOptions): Promise<T> {
    return withLockOn(this.engine, this.name, () => this.lock(options), fn);
  }

  /**
   * Releases one hold taken by the current lock context. Outside any context (a script, a cron job,
   * `onModuleInit`), it releases the acquisition made outside a context that holds this lock in this
   * process: `lock(name)` then `unlock(name)` works there too (see LockEngine.byName).
   */
  async unlock(): Promise<void> {
    const named = this.engine.byName(this);
    if (named.owner === undefined) throw new LockNotHeldError(this.name, named.why);
    const held = this.engine.find(named.owner, this);
    if (!held) throw new LockNotHeldError(this.name, getLockContext() ? 'the current lock context does not hold it' : 'no acquisition made outside a context holds it in this process');
    await this.engine.release(held);
  }

  /** The owner whose holds a by-name query counts (see LockEngine.byName), or undefined. */
  protected ownerByName(): string | undefined {
    return this.engine.byName(this).owner;
  }

  /** Acquires for `owner`, waiting per `request`. Returns the handle, or the last seen TTL on timeout. */
  async acquire(who: Owner, request: AcquireRequest): Promise<AcquiredLock | { ttl: number }> {
    const owner = who.id;
    this.engine.assertOpen(`acquire lock "${this.name}"`);
    const { signal } = request;
    if (signal?.aborted) throw new LockAcquireAbortedError(this.name, signal.reason);
    const leaseMs = request.leaseMs ?? this.engine.watchdogTimeoutMs;
    const terms: Terms = {
      owner,
      outsideContext: who.outsideContext,
      leaseMs,
      watchdog: request.leaseMs === undefined,
      replicaAck: request.replicaAck === undefined ? this.engine.settings.replicaAck : (request.replicaAck ?? undefined),
      signal,
      willWait: request.waitMs > 0,
      queued: false,
      uncertain: false,
    };
    const calledAt = monotonicNow();
    const finished = this.engine.beginAcquisition(owner, this);
    let granted = false;
    try {
      const outcome = await this.acquireOrWait(terms, request, calledAt);
      granted = !('ttl' in outcome);
      return outcome;
    } catch (error) {
      const outcome = error instanceof LockAcquireAbortedError ? 'aborted' : 'error';
      this.engine.events.emit('failed', { name: this.name, kind: this.kind, outcome, waitedMs: monotonicNow() - calledAt, error: error as Error });
      throw error;
    } finally {
      finished();
      if (!granted && this.engine.acquisitionsInFlight(owner, this) === 0) {
        if (terms.uncertain) this.releasePhantom(owner);
        if (terms.willWait) await this.abandon(owner).catch((error: unknown) => this.engine.reportBackground('release', this.name, error));
      }
      // The last caller of this process that was willing to wait ends without the lock (timeout,
      // abort, error, even on its first attempt, which marked the process as waiting): the process no
      // longer waits, so its mark goes and a grant to it is passed on.
      if (!granted && terms.willWait && this.engine.notifier.waiterCount(this.channel) === 0) this.passOnUnwanted();
    }
  }

  private async acquireOrWait(terms: Terms, request: AcquireRequest, calledAt: number): Promise<AcquiredLock | { ttl: number }> {
    // This owner's last release of this lock had an unknown outcome and is being retried: wait
    // for it, or a re-entry could stack a hold on a lock that was meant to be released.
    if (this.engine.find(terms.owner, this)?.releasing && !(await this.engine.settleRelease(terms.owner, this, calledAt + request.waitMs))) {
      return this.timedOut(0, calledAt);
    }
    // Callers of this process already wait for this lock: queue behind them instead of overtaking them
    // (a release here hands the lock to the first of them). Not when re-entering a lock we hold.
    if (request.waitMs > 0 && this.handsOverTo(terms) && this.engine.notifier.waiterCount(this.channel) > 0 && !this.engine.find(terms.owner, this)?.active) {
      return this.waitFor(terms, calledAt, calledAt + request.waitMs, 0, undefined);
    }
    let first: (AttemptResult & { startedAt: number }) | undefined;
    let firstError: LockBackendError | undefined;
    try {
      first = await this.attemptOnce(terms);
    } catch (error) {
      if (error instanceof LockBackendError) terms.uncertain = true;
      // A caller willing to wait waits through a Redis hiccup too; one that is not gets the error.
      if (!(error instanceof LockBackendError) || request.waitMs <= 0) throw error;
      firstError = error;
    }
    if (first?.acquired) return this.granted(terms, first, calledAt, first.startedAt);
    if (first && request.waitMs <= 0) return this.timedOut(first.ttl, calledAt);
    return this.waitFor(terms, calledAt, calledAt + request.waitMs, first?.ttl ?? 0, firstError);
  }

  /**
   * An attempt of this acquisition failed with an unknown outcome (it may have been granted, its
   * reply lost) and the acquisition ended without the lock. If this owner holds nothing here and
   * tries nothing else, any hold Redis has for it is a phantom: release it, so that it does not block
   * others for a whole lease.
   */
  private releasePhantom(owner: string): void {
    if (this.engine.find(owner, this)?.active) return;
    this.engine.releaseFor(this, owner);
  }

  private async waitFor(
    terms: Terms,
    calledAt: number,
    deadline: number,
    firstTtl: number,
    firstError: LockBackendError | undefined,
  ): Promise<AcquiredLock | { ttl: number }> {
    const { signal } = terms;
    const { notifier } = this.engine;
    const waiter = notifier.join(this.channel, deadline, this.shared, this.handsOver ? () => this.passOnUnwanted() : undefined);
    terms.queued = true;
    // A plain lock released by another caller of this process may be handed to this one directly.
    if (this.handsOverTo(terms)) waiter.handoffTarget = { owner: terms.owner, leaseMs: terms.leaseMs };
    let acquired = false;
    try {
      const ready = await notifier.ready(waiter, deadline, signal, monotonicNow);
      if (ready === 'aborted') throw new LockAcquireAbortedError(this.name, signal?.reason);
      if (ready === 'closed') throw new LockClientClosedError(`wait for lock "${this.name}"`);
      // First in the local queue: retry now that the subscription is in place, in case the lock was
      // released in between. Queued behind others: such a release woke the head; wait for our turn.
      let attemptNow = notifier.isHead(waiter);
      let ttl = firstTtl;
      let failures = firstError ? 1 : 0;
      let lastError = firstError;
      // Without a deadline, an outage must still surface: give up after operationTimeout of failures.
      let failingSince = firstError ? calledAt : undefined;
      const failureBudget = Number.isFinite(deadline) ? Infinity : this.engine.settings.operationTimeoutMs;
      for (;;) {
        if (waiter.handoff) {
          // A release in this process chose us: the lock may be ours without asking Redis.
          const handed = await waiter.handoff.result;
          waiter.handoff = undefined;
          if (!handed.granted && handed.uncertain) terms.uncertain = true;
          if (handed.granted) {
            acquired = true;
            this.engine.events.emit('waited', { name: this.name, kind: this.kind, waitedMs: monotonicNow() - calledAt });
            return this.register(terms, { acquired: true, token: handed.token, holds: 1 }, 1, calledAt, handed.startedAt);
          }
          attemptNow = true;
        }
        if (attemptNow) {
          try {
            const result = await this.attemptOnce(terms);
            lastError = undefined;
            failures = 0;
            failingSince = undefined;
            if (result.acquired) {
              acquired = true;
              this.engine.events.emit('waited', { name: this.name, kind: this.kind, waitedMs: monotonicNow() - calledAt });
              return await this.granted(terms, result, calledAt, result.startedAt);
            }
            ttl = result.ttl;
          } catch (error) {
            if (!(error instanceof LockBackendError)) throw error;
            lastError = error; // Redis hiccup (restart, failover): keep waiting, retry with back-off.
            terms.uncertain = true;
            failingSince ??= monotonicNow();
            if (monotonicNow() - failingSince >= failureBudget) throw error;
          }
        }
        attemptNow = true;
        const remaining = deadline - monotonicNow();
        if (remaining <= 0) {
          if (lastError) throw lastError;
          return this.timedOut(ttl, calledAt);
        }
        // The head watches the holder's lease; the rest wait for their turn (or their deadline).
        const pause = lastError
          ? ERROR_BACKOFF_MS[Math.min(failures++, ERROR_BACKOFF_MS.length - 1)]!
          : !notifier.isHead(waiter)
            ? Infinity
            : ttl > 0
              ? ttl
              : NO_TTL_PAUSE_MS;
        const outcome = await waiter.wait(Math.min(pause, this.maxPauseMs, remaining), signal);
        if (outcome === 'aborted') throw new LockAcquireAbortedError(this.name, signal?.reason);
        if (outcome === 'closed') throw new LockClientClosedError(`wait for lock "${this.name}"`);
        // Slept until the deadline: the wait is over, without one more attempt after it.
        if (outcome === 'deadline' && !waiter.handoff) {
          if (lastError) throw lastError;
          return this.timedOut(ttl, calledAt);
        }
      }
    } finally {
      terms.queued = false;
      notifier.leave(waiter, acquired, terms.leaseMs);
      // Leaving while a local release was handing us the lock: give it back if it was (or may have been) granted.
      const handed = acquired ? undefined : waiter.handoff?.decline();
      if (handed && (handed.granted || handed.uncertain)) this.engine.releaseFor(this, terms.owner);
    }
  }

  /** Drops this process's waiting mark (and passes on a grant to it), in the background; best effort. */
  private passOnUnwanted(): void {
    if (!this.handsOver) return;
    this.engine.inBackground('unmark', this.name, async () => {
      // Best effort, but a mark left behind would cost every process a grant that nobody takes (its lease):
      // a failed attempt is retried twice.
      for (let attempt = 0; ; attempt++) {
        try {
          return await this.unmark!();
        } catch (error) {
          if (attempt >= 2) throw error;
          await new Promise<void>((resolve) => afterTimeout(100 * 2 ** attempt, resolve));
        }
      }
    });
  }

  /** Whether a release in this process may hand this lock straight to a caller with these terms. */
  private handsOverTo(terms: Terms): boolean {
    return this.handsOver && !terms.replicaAck;
  }

  /**
   * One bounded attempt. If it is abandoned (operation timeout, caller abort) and Redis grants it
   * after all, the late grant is released again so that nobody sits out a lease nobody holds.
   */
  private async attemptOnce({ owner, leaseMs, replicaAck, signal, willWait, queued }: Terms): Promise<AttemptResult & { startedAt: number }> {
    this.engine.assertOpen(`acquire lock "${this.name}"`);
    const startedAt = monotonicNow();
    const pending = this.attempt(owner, leaseMs, replicaAck, willWait, queued);
    try {
      const result = (await this.engine.bounded(pending, signal)) as AttemptResult & { startedAt: number };
      result.startedAt = startedAt;
      return result;
    } catch (error) {
      if (error instanceof AbandonedOperation) {
        pending.then(
          (late) => {
            if (late.acquired) this.engine.inBackground('release', this.name, () => this.engine.bounded(this.release(owner, false)));
          },
          () => undefined, // the attempt failed anyway: nothing was granted
        );
        if (error.why === 'aborted') throw new LockAcquireAbortedError(this.name, signal?.reason);
        throw new LockBackendError('lock', this.name, new Error(`no reply within ${this.engine.settings.operationTimeoutMs} ms`));
      }
      // Our own errors (a backend error, a refused upgrade) pass as they are; Redis errors get wrapped.
      if (error instanceof DistributedLockError) throw error;
      throw new LockBackendError('lock', this.name, error);
    }
  }

  /**
   * Registers a grant. The holds Redis reports must be what this owner knows it holds, plus this one;
   * more means an earlier grant's reply was lost, leaving a phantom hold nobody would release: it is
   * corrected (owner-checked) before the handle is returned. Owner ids never leave this process, so
   * the local registry is the truth about what the application holds.
   */
  private granted(terms: Terms, result: Grant, calledAt: number, startedAt: number): AcquiredLock | Promise<AcquiredLock> {
    const held = this.engine.find(terms.owner, this);
    const expected = held?.active && held.token === result.token ? held.holds + 1 : 1;
    if (result.holds > expected && this.engine.acquisitionsInFlight(terms.owner, this) <= 1) {
      return this.engine.bounded(this.adjustHolds(terms.owner, expected)).then(
        () => this.register(terms, result, expected, calledAt, startedAt),
        (error: unknown) => {
          this.engine.reportBackground('release', this.name, error);
          return this.register(terms, result, result.holds, calledAt, startedAt);
        },
      );
    }
    return this.register(terms, result, result.holds, calledAt, startedAt);
  }

  private register(terms: Terms, result: Grant, holds: number, calledAt: number, startedAt: number): AcquiredLock {
    const grant = { token: result.token, holds, validityMs: result.validityMs ?? terms.leaseMs };
    const handle = this.engine.register(this, { id: terms.owner, outsideContext: terms.outsideContext }, grant, terms.leaseMs, startedAt, terms.watchdog, terms.replicaAck);
    this.engine.events.emit('acquired', {
      name: this.name,
      kind: this.kind,
      waitedMs: monotonicNow() - calledAt,
      reentrant: holds > 1,
    });
    return handle;
  }

  private timedOut(ttl: number, calledAt: number): { ttl: number } {
    this.engine.events.emit('failed', { name: this.name, kind: this.kind, outcome: 'timeout', waitedMs: monotonicNow() - calledAt });
    return { ttl };
  }
}
