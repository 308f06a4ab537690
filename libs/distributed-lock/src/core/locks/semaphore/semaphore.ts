import { nextOwnerSequence } from '../../context/lock-context.js';
import type { ReplicaAck } from '../../config/replica-ack.js';
import type { RenewResult } from '../../engine/lease-resource.js';
import type { ReleaseReply } from '../../scripts/lock-script.js';
import type { LockRuntime } from '../../engine/lock-runtime.js';
import type { LockInspection } from '../../inspection/lock-inspection.js';
import { InvalidLockArgumentError } from '../../errors/invalid-lock-argument.error.js';
import { UnsupportedLockOperationError } from '../../errors/unsupported-lock-operation.error.js';
import { semaphoreAcquire } from './semaphore-acquire.script.js';
import { semaphoreLeave } from './semaphore-leave.script.js';
import { semaphorePermits, type SemaphorePermitsOperation, type SemaphorePermitsReply } from './semaphore-permits.script.js';
import { semaphoreRelease } from './semaphore-release.script.js';
import { semaphoreRenew } from './semaphore-renew.script.js';
import { processChannel, semaphoreKeys, type SemaphoreKeys } from './semaphore-keys.js';
import { describe, type Duration } from '../../util/duration.js';
import { assertKnownKeys, assertLockName, isPlainObject } from '../../util/validate.js';
import { lockRequest, queueTimeoutMs, tryLockRequest, type AcquireRequest, type LockOptions, type TryLockOptions } from '../acquire-options.js';
import { Acquisition } from '../acquisition.js';
import type { AttemptArgs, AttemptResult, LockKindContract } from '../lock-kind.js';
import { PermitsHandle } from './permits-handle.js';
import { SEMAPHORE_KIND } from './semaphore.kind.js';
import { confirmGrant, confirmRenewal } from '../replica-confirmation.js';
import { withLockOn } from '../with-lock.js';

/** How long a queued waiter's place survives without being refreshed, by default. */
export const DEFAULT_SEMAPHORE_QUEUE_TIMEOUT_MS = 5_000;

/** Options of `getSemaphore`. */
export interface SemaphoreOptions {
  /**
   * The semaphore's size, in permits: stored in Redis at its first use if none is stored yet. From
   * then on the stored size counts (the same for every process); change it with setSize / resizeBy.
   */
  size: number;
  /**
   * How long a waiter's place in line survives without a refresh (default 5 s; waiters refresh every
   * third of it): the longest a crashed waiter can hold up the ones behind it.
   */
  queueTimeout?: Duration;
}

/**
 * `getSemaphore(name, options)`, checked. Refused in redlock mode: permits counted on independent
 * masters do not add up. With 2 permits on 3 nodes, holders A, B and C can win the majorities
 * {1,2}, {2,3} and {1,3}: each node then counts 2 holders, within its limit, while 3 hold permits.
 */
export function createSemaphore(runtime: LockRuntime, mode: string, name: string, options: SemaphoreOptions): Semaphore {
  assertLockName(name, 'semaphore name');
  if (!isPlainObject(options)) throw new InvalidLockArgumentError('semaphore options', `expected { size, queueTimeout? }, got ${describe(options)}.`);
  assertKnownKeys(options, ['size', 'queueTimeout'], 'semaphore options');
  const size = permitCount(options.size, 'semaphore size', 0);
  const queueTimeout = queueTimeoutMs(options.queueTimeout);
  if (mode === 'redlock') {
    throw new UnsupportedLockOperationError(
      name,
      'use a semaphore in redlock mode',
      'permits counted on independent masters do not add up (with 2 permits on 3 nodes, three holders can each win a different majority while no node counts more than 2), so more holders than permits could run at once. Use single, master-slave, sentinel or cluster mode for semaphores.',
    );
  }
  return new Semaphore(runtime, name, size, queueTimeout);
}

/** The checked count of permits of one request or one size. */
export function permitCount(value: unknown, argument: string, min: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new InvalidLockArgumentError(argument, `expected a whole number of permits, at least ${min}, got ${describe(value)}.`);
  }
  return value;
}

/**
 * Redisson's RPermitExpirableSemaphore (redis-semaphore's Semaphore and MultiSemaphore): at most
 * `size` permits held at once across every process, each acquisition of one or several permits a
 * lease of its own.
 *
 * - No permit leaks: an acquisition's lease is renewed by the watchdog while its process lives (or
 *   lasts the `leaseTime` given), so a crashed holder's permits come back when its lease ends.
 * - Every acquisition is its own holder, with its own fencing token, lost-lease signal and handle,
 *   released through that handle. Not reentrant (as java.util.concurrent.Semaphore and Redisson's
 *   semaphores): a permit counts a unit of concurrent use, not an owner, so a lock context that holds
 *   permits and asks again takes more (or waits for them); the lock context plays no part.
 * - Waiters are served in arrival order across processes, through a line kept in Redis (as the fair
 *   lock's): only the first may take permits, and only all it asked for at once, so a caller asking
 *   for several is never starved by callers asking for one. They are woken by pub/sub when permits
 *   come back (a release, a lease that ended, a larger size), not by polling; each refreshes its place
 *   every third of `queueTimeout` (a liveness heartbeat), so a crashed waiter holds the line up for
 *   at most that long.
 * - The size lives in Redis: `size` is stored at the semaphore's first use if none is stored yet;
 *   from then on Redis's value counts, changed with `trySetSize`, `setSize`, `resizeBy`.
 *   A request larger than the size is refused (InvalidLockArgumentError): it could never be met and
 *   would hold up everyone behind it.
 * - Keys: `<prefix>{name}:semaphore` (+ `:holders`, `:queue`, `:queue-deadlines`), one cluster slot.
 *   Single-node modes and cluster only: redlock mode refuses it (UnsupportedLockOperationError).
 */
export class Semaphore {
  readonly kind = 'semaphore' as const;
  /** @internal The semaphore's state key, `<prefix>{name}:semaphore`. */
  readonly id: string;
  /** @internal This process's channel of the semaphore (processChannel): grants to its waiters come on it. */
  readonly channel: string;
  private readonly keys: SemaphoreKeys;

  /** @internal Made by LockClient.getSemaphore. */
  constructor(
    private readonly runtime: LockRuntime,
    readonly name: string,
    /** @internal The size stored at the first use if none is stored yet. */
    readonly initialPermits: number,
    /** @internal */
    readonly queueTimeoutMs = DEFAULT_SEMAPHORE_QUEUE_TIMEOUT_MS,
  ) {
    this.keys = semaphoreKeys(runtime.keys, name);
    this.id = this.keys.state;
    this.channel = processChannel(this.keys.channel, runtime.clientId);
  }

  /**
   * Takes `permits` permits (default 1), waiting as long as it takes; with `waitTime`, throws
   * LockAcquireTimeoutError when the wait is over. A duration is the lease (no watchdog).
   */
  async acquire(permits = 1, leaseTimeOrOptions?: Duration | LockOptions): Promise<PermitsHandle> {
    const count = permitCount(permits, 'permits', 1);
    const request = lockRequest(leaseTimeOrOptions);
    const outcome = await this.take(count, request);
    if ('ttl' in outcome) throw this.runtime.timeoutError(this.name, request.waitMs, outcome.ttl, this.busy(count));
    return outcome;
  }

  /** Takes `permits` permits if they are free within `waitTime` (default: no wait, and no place in the line); false otherwise. */
  async tryAcquire(permits = 1, waitTimeOrOptions?: Duration | TryLockOptions, leaseTime?: Duration): Promise<PermitsHandle | false> {
    const count = permitCount(permits, 'permits', 1);
    const outcome = await this.take(count, tryLockRequest(waitTimeOrOptions, leaseTime));
    return 'ttl' in outcome ? false : outcome;
  }

  /** Runs `fn` holding `permits` permits and always gives them back; `fn` gets the handle. */
  withPermits<T>(permits: number, fn: (handle: PermitsHandle) => T | Promise<T>, options?: LockOptions): Promise<T> {
    return withLockOn(this.runtime, this.name, () => this.acquire(permits, options), fn);
  }

  /** Permits free right now (0 when the size was lowered below what is held). */
  async availablePermits(): Promise<number> {
    return Math.max(0, (await this.permitsOperation('availablePermits', 'read', 0)).free);
  }

  /**
   * Its size, the acquisitions holding permits (process, permits, token, lease left) and the callers
   * in line, as Redis has them now: one script, a consistent snapshot. See LockClient.inspect.
   */
  inspect(): Promise<LockInspection> {
    return this.runtime.inspect(this.name, 'semaphore');
  }

  /** The semaphore's size: free permits plus those held. */
  async getSize(): Promise<number> {
    return (await this.permitsOperation('getSize', 'read', 0)).size;
  }

  /** Sets the size if none is stored yet (Redisson's trySetPermits); true if this call set it. */
  async trySetSize(size: number): Promise<boolean> {
    return (await this.permitsOperation('trySetSize', 'try-set', permitCount(size, 'trySetSize size', 0))).outcome === 1;
  }

  /**
   * Sets the size, whatever it was. Lowering it below what is held takes no permit away: new
   * acquisitions wait until enough come back. Waiters whose request no longer fits are refused.
   */
  async setSize(size: number): Promise<void> {
    await this.permitsOperation('setSize', 'set', permitCount(size, 'setSize size', 0));
  }

  /** Adds `delta` permits to the size (Redisson's addPermits; negative takes away, not below zero). Returns the new size. */
  async resizeBy(delta: number): Promise<number> {
    if (typeof delta !== 'number' || !Number.isSafeInteger(delta)) {
      throw new InvalidLockArgumentError('resizeBy delta', `expected a whole number (negative to take away), got ${describe(delta)}.`);
    }
    const result = await this.permitsOperation('resizeBy', 'add', delta);
    if (result.outcome === -1) {
      throw new InvalidLockArgumentError(
        'resizeBy delta',
        `adding ${delta} to semaphore "${this.name}" of ${result.size} permits would take its size below zero.`,
      );
    }
    return result.size;
  }

  /** Callers waiting in line right now (live, or not yet dropped), for monitoring. */
  async queueLength(): Promise<number> {
    return (await this.permitsOperation('queueLength', 'read', 0)).queued;
  }

  /** @internal One attempt to take `permits` permits (see the acquire script); called through PermitsRequest. */
  async attempt(permits: number, { owner, leaseMs, replicaAck, willWait, watchdog, queued }: AttemptArgs): Promise<AttemptResult> {
    const reply = await this.runtime.nodes[0]!.run(semaphoreAcquire, {
      keys: this.keys,
      owner,
      permits,
      leaseMs,
      initialPermits: this.initialPermits,
      queueTimeoutMs: this.queueTimeoutMs,
      queueOnFailure: willWait,
      queued,
      publish: this.runtime.publishCommand(),
      watchdog,
    });
    if ('tooMany' in reply) {
      throw new InvalidLockArgumentError(
        'permits',
        `${permits} asked of semaphore "${this.name}", whose size is ${reply.size}: such a request could never be met and would hold up the callers behind it. Ask for at most ${reply.size}, or raise the size (setSize, resizeBy).`,
      );
    }
    if (reply.acquired && replicaAck) await confirmGrant(this.runtime, this, replicaAck, () => this.release(owner));
    return reply;
  }

  /** @internal Lengthens one acquisition's lease. */
  async renew(owner: string, leaseMs: number, replicaAck: ReplicaAck | undefined): Promise<RenewResult> {
    const renewed = await this.runtime.nodes[0]!.run(semaphoreRenew, { keys: this.keys, owner, leaseMs, publish: this.runtime.publishCommand() });
    return confirmRenewal(this.runtime, this, renewed, leaseMs, replicaAck);
  }

  /** @internal Gives back one acquisition's permits (see LeaseResource.release). */
  release(owner: string): Promise<ReleaseReply> {
    return this.runtime.nodes[0]!.run(semaphoreRelease, { keys: this.keys, owner, publish: this.runtime.publishCommand() });
  }

  /** @internal A waiter leaves the line (see LockKindContract.abandon). */
  async leave(owner: string): Promise<void> {
    await this.runtime.roundTrips.bounded(this.runtime.nodes[0]!.run(semaphoreLeave, { keys: this.keys, owner, publish: this.runtime.publishCommand() }));
  }

  /**
   * One acquisition: a new owner id of its own (one holder per acquisition), through the same
   * Acquisition as every lock (attempt, wait woken by pub/sub, deadline, abort, clean-up). The owner id
   * starts with the client id: the scripts address a grant to its process by it (sem_process_channel).
   */
  private async take(permits: number, request: AcquireRequest): Promise<PermitsHandle | { ttl: number }> {
    const owner = { id: `${this.runtime.clientId}:${nextOwnerSequence()}`, outsideContext: false };
    const outcome = await new Acquisition(new PermitsRequest(this, permits), this.runtime, owner, request).run();
    return 'ttl' in outcome ? outcome : new PermitsHandle(outcome, permits);
  }

  private busy(permits: number): string {
    return `Semaphore "${this.name}" did not have ${permits} permit${permits === 1 ? '' : 's'} free for this caller`;
  }

  private permitsOperation(name: string, operation: SemaphorePermitsOperation, value: number): Promise<SemaphorePermitsReply> {
    return this.runtime.query(name, this.name, () =>
      this.runtime.nodes[0]!.run(semaphorePermits, {
        keys: this.keys,
        operation,
        value,
        initialPermits: this.initialPermits,
        publish: this.runtime.publishCommand(),
      }),
    );
  }
}

/**
 * One acquisition's request of `permits` permits, as the Acquisition and the lease machinery see it
 * (LockKindContract): the semaphore's keys and channel, the number of permits bound in. The registry
 * counts it as the semaphore (same id and kind) and its owner id is its own, so each request is one
 * held lease.
 */
class PermitsRequest implements LockKindContract {
  readonly kind = 'semaphore' as const;
  readonly shared = false;
  /** An acquisition is one lease, under an owner of its own. */
  readonly countsHolds = false;
  readonly handover = undefined;
  readonly messages = SEMAPHORE_KIND.messages;

  constructor(
    private readonly semaphore: Semaphore,
    private readonly permits: number,
  ) {}

  get name(): string {
    return this.semaphore.name;
  }

  get id(): string {
    return this.semaphore.id;
  }

  get channel(): string {
    return this.semaphore.channel;
  }

  /** Waiters refresh their place in the line every third of the queue timeout. */
  get maxPauseMs(): number {
    return Math.max(1, Math.floor(this.semaphore.queueTimeoutMs / 3));
  }

  attempt(args: AttemptArgs): Promise<AttemptResult> {
    return this.semaphore.attempt(this.permits, args);
  }

  renew(owner: string, leaseMs: number, replicaAck: ReplicaAck | undefined): Promise<RenewResult> {
    return this.semaphore.renew(owner, leaseMs, replicaAck);
  }

  release(owner: string): Promise<ReleaseReply> {
    return this.semaphore.release(owner);
  }

  /** An acquisition holds its permits once: nothing to correct. */
  adjustHolds(): Promise<void> {
    return Promise.resolve();
  }

  abandon(owner: string): Promise<void> {
    return this.semaphore.leave(owner);
  }
}
