import { InvalidLockArgumentError } from '../../errors/invalid-lock-argument.error.js';
import { LockBackendError } from '../../errors/lock-backend.error.js';
import { LockNotHeldError } from '../../errors/lock-not-held.error.js';
import type { Owner } from '../../engine/lock-runtime.js';
import type { LockRuntime } from '../../engine/lock-runtime.js';
import { LockHandle } from '../../context/lock-handle.js';
import { type HeldLockHandle } from '../../engine/held-lock-handle.js';
import { settleWithin } from '../../util/late-timer.js';
import type { Duration } from '../../util/duration.js';
import { lockRequest, tryLockRequest, type AcquireRequest, type LockOptions, type TryLockOptions } from '../acquire-options.js';
import type { LockInspection } from '../../inspection/lock-inspection.js';
import type { BaseLock } from '../base-lock.js';
import { withLockOn } from '../with-lock.js';

/** What a multi-lock acquisition returns: every lock's handle, released together. */
export class MultiLockHandle extends LockHandle {
  /** Names joined with ', ' (for logs). */
  readonly name: string;
  /** Every lock's fencing token by lock name: send the one of each resource you write. */
  readonly tokens: Readonly<Record<string, number>>;
  private readonly anyLost: AbortSignal;
  private released = false;

  /** @internal Made by MultiLock. */
  constructor(
    /** @internal */
    readonly handles: readonly HeldLockHandle[],
  ) {
    super();
    this.name = handles.map((handle) => handle.name).join(', ');
    this.tokens = Object.fromEntries(handles.map((handle) => [handle.name, handle.token]));
    this.anyLost = AbortSignal.any(handles.map((handle) => handle.signal));
  }

  /** Aborted as soon as any of the locks is lost (each lease checked as it is read, see LockHandle). */
  get signal(): AbortSignal {
    for (const handle of this.handles) void handle.signal;
    return this.anyLost;
  }

  /** The first lock's token (in canonical order); use `tokens` to fence each resource. */
  get token(): number {
    return this.handles[0]!.token;
  }

  get isHeld(): boolean {
    return !this.released && this.handles.every((handle) => handle.isHeld);
  }

  /** Throws unless every lock is known to be held at this instant (see LockHandle.throwIfLost). */
  throwIfLost(): void {
    if (this.released) throw new LockNotHeldError(this.name, 'this handle has already released it');
    for (const handle of this.handles) handle.throwIfLost();
  }

  /**
   * Releases every lock (in reverse order). All are tried even if one fails; then the first failure
   * is thrown (LockNotHeldError when one was lost meanwhile).
   */
  async unlock(): Promise<void> {
    if (this.released) throw new LockNotHeldError(this.name, 'this handle has already released it');
    this.released = true;
    const failures: unknown[] = [];
    for (const handle of [...this.handles].reverse()) {
      if (!handle.isHeld && handle.signal.aborted) {
        failures.push(new LockNotHeldError(handle.name, 'it was lost before the multi-lock was released'));
        continue;
      }
      await handle.unlock().catch((error: unknown) => failures.push(error));
    }
    if (failures.length > 0) throw failures[0];
  }

  toJSON(): { name: string; tokens: Readonly<Record<string, number>>; isHeld: boolean } {
    return { name: this.name, tokens: this.tokens, isHeld: this.isHeld };
  }
}

/**
 * Redisson's MultiLock: several locks (any kinds, any cluster slots) taken all or nothing by one
 * owner, and released together.
 *
 * - Canonical order: the locks are always taken in the order of their keys, whatever order the caller
 *   gave, so two multi-locks over overlapping names cannot deadlock (no ABBA).
 * - First, one attempt on every lock at once (one round trip when nothing is contended). If any is
 *   busy, what was taken is released and the locks are taken one by one in canonical order, each
 *   waiting at most what is left of `waitTime`.
 * - All or nothing: when the wait is over, the caller gives up, or Redis fails, every lock taken so far
 *   is released before the call returns.
 */
export class MultiLock {
  /** The locks, in canonical order, without duplicates. */
  readonly locks: readonly BaseLock[];
  readonly name: string;

  /** @internal Made by LockClient.getMultiLock. */
  constructor(
    private readonly runtime: LockRuntime,
    locks: readonly BaseLock[],
  ) {
    if (locks.length === 0) throw new InvalidLockArgumentError('multi-lock names', 'give at least one lock name.');
    const byName = new Map<string, BaseLock>();
    for (const lock of locks) {
      const existing = byName.get(lock.name);
      if (existing && existing.kind !== lock.kind) {
        throw new InvalidLockArgumentError('multi-lock names', `"${lock.name}" appears as a ${existing.kind} and a ${lock.kind} lock; give each name once.`);
      }
      byName.set(lock.name, lock);
    }
    this.locks = [...byName.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    this.name = this.locks.map((lock) => lock.name).join(', ');
  }

  /** Acquires all, waiting as long as it takes (or up to `waitTime`, then LockAcquireTimeoutError). */
  async lock(leaseTimeOrOptions?: Duration | LockOptions): Promise<MultiLockHandle> {
    const request = lockRequest(leaseTimeOrOptions);
    const outcome = await this.acquire(this.runtime.currentOwner(), request);
    if ('ttl' in outcome) throw this.runtime.timeoutError(this.name, request.waitMs, outcome.ttl);
    return outcome;
  }

  /** Acquires all within `waitTime` (default: no wait), or none and resolves false. */
  async tryLock(waitTimeOrOptions?: Duration | TryLockOptions, leaseTime?: Duration): Promise<MultiLockHandle | false> {
    const request = tryLockRequest(waitTimeOrOptions, leaseTime);
    const outcome = await this.acquire(this.runtime.currentOwner(), request);
    return 'ttl' in outcome ? false : outcome;
  }

  /** Runs `fn` holding all the locks and always releases them. */
  withLock<T>(fn: (lock: MultiLockHandle) => T | Promise<T>, options?: LockOptions): Promise<T> {
    return withLockOn(this.runtime, this.name, () => this.lock(options), fn);
  }

  /** Releases one hold of each lock taken by the current lock context (or outside one: see BaseLock.unlock). */
  async unlock(): Promise<void> {
    const failures: unknown[] = [];
    for (const lock of [...this.locks].reverse()) await lock.unlock().catch((error: unknown) => failures.push(error));
    if (failures.length > 0) throw failures[0];
  }

  /** Each lock's inspection (see LockClient.inspect), in canonical order. */
  inspect(): Promise<LockInspection[]> {
    return Promise.all(this.locks.map((lock) => lock.inspect()));
  }

  /** Whether any of the locks is held by anyone. */
  async isLocked(): Promise<boolean> {
    const states = await Promise.all(this.locks.map((lock) => lock.isLocked()));
    return states.some(Boolean);
  }

  /**
   * @internal Acquires every lock for `owner`; returns the handle, or the last seen TTL when the wait ran out.
   * No lock's wait starts after the deadline, so the answer comes by the deadline plus one operation
   * timeout (each lock's Acquisition keeps to it), and a partial acquisition is given back in parallel
   * within the same bound (then in the background).
   */
  async acquire(owner: Owner, request: AcquireRequest): Promise<MultiLockHandle | { ttl: number }> {
    this.runtime.assertOpen('acquire multi-lock', this.name);
    const deadline = this.runtime.clock.now() + request.waitMs;
    const answerBy = deadline + this.runtime.operationTimeoutMs;
    const taken: HeldLockHandle[] = [];
    try {
      // Fast path: everything at once, no waiting. Anything busy: undo, then go in canonical order.
      const first = await Promise.allSettled(this.locks.map((lock) => lock.acquire(owner, { ...request, waitMs: 0 })));
      const failure = first.find((result): result is PromiseRejectedResult => result.status === 'rejected');
      for (const result of first) {
        if (result.status === 'fulfilled' && !('ttl' in result.value)) taken.push(result.value);
      }
      // A caller willing to wait waits through a Redis hiccup on the fast path too, as each lock's wait
      // does (it failed a 30 s wait at once on a refused attempt: found by the simulator).
      if (failure && (request.waitMs <= 0 || !(failure.reason instanceof LockBackendError))) throw failure.reason;
      if (!failure && taken.length === this.locks.length) return new MultiLockHandle(taken);
      await this.undo(taken.splice(0), answerBy);
      const busy = first.find((result) => result.status === 'fulfilled' && 'ttl' in result.value) as PromiseFulfilledResult<{ ttl: number }> | undefined;
      if (request.waitMs <= 0) return { ttl: busy!.value.ttl };
      for (const lock of this.locks) {
        const waitMs = Number.isFinite(request.waitMs) ? deadline - this.runtime.clock.now() : Infinity;
        if (waitMs <= 0) {
          await this.undo(taken.splice(0), answerBy);
          if (!busy) throw failure!.reason;
          return { ttl: busy.value.ttl };
        }
        const outcome = await lock.acquire(owner, { ...request, waitMs });
        if ('ttl' in outcome) {
          await this.undo(taken.splice(0), answerBy);
          return outcome;
        }
        taken.push(outcome);
      }
      return new MultiLockHandle(taken);
    } catch (error) {
      await this.undo(taken.splice(0), answerBy);
      throw error;
    }
  }

  /**
   * Releases a partial acquisition, every lock at once; awaited until `answerBy` at the latest, then
   * left to finish in the background. Failures are reported, not thrown.
   */
  private async undo(handles: HeldLockHandle[], answerBy: number): Promise<void> {
    if (handles.length === 0) return;
    const released = Promise.all(
      handles.map((handle) => handle.unlock().catch((error: unknown) => this.runtime.background.report('release', handle.name, error))),
    ).then(() => true);
    const done = await settleWithin(this.runtime.clock, released, answerBy - this.runtime.clock.now(), () => false);
    if (!done) this.runtime.background.run('release', this.name, () => released);
  }
}
