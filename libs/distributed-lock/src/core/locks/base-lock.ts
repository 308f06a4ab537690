import type { ReplicaAck } from '../config/replica-ack.js';
import { getLockContext } from '../context/lock-context.js';
import type { LockHandover, RenewResult } from '../engine/lease-resource.js';
import type { Owner } from '../engine/lock-runtime.js';
import type { LockHandle } from '../context/lock-handle.js';
import { registryKey } from '../engine/held-locks.js';
import { LockNotHeldError } from '../errors/lock-not-held.error.js';
import type { LockKind } from '../events/lock-events.js';
import type { ReleaseReply } from '../scripts/lock-script.js';
import type { LockInspection } from '../inspection/lock-inspection.js';
import type { ChannelMessages } from '../waiting/line-event.js';
import type { Duration } from '../util/duration.js';
import { lockRequest, tryLockRequest, type AcquireRequest, type LockOptions, type TryLockOptions } from './acquire-options.js';
import { Acquisition, type AcquireOutcome } from './acquisition.js';
import type { AttemptArgs, AttemptResult } from './lock-kind.js';
import type { LockProtocol } from './lock-protocol.js';
import type { LockRuntime } from '../engine/lock-runtime.js';
import { withLockOn } from './with-lock.js';

/**
 * A lock object: Redisson's RLock API (lock, tryLock, unlock, withLock, isLocked, getHoldCount,
 * remainTimeToLive, forceUnlock) over one lock kind. A kind supplies its scripts (attempt, renew,
 * release) and its traits (LockKindContract); an Acquisition does the waiting, the engine the leases.
 * It is a LockKindContract without saying `implements`: the contract is internal, and a heritage clause
 * would name it in the public declarations (`acquire` checks the fit where it hands itself over).
 */
export abstract class BaseLock {
  /** A lock's kind (a semaphore is not a BaseLock: see Semaphore). */
  abstract readonly kind: Exclude<LockKind, 'semaphore'>;
  /** The lock's key: `<prefix>{name}` plus the kind's variant suffix. */
  readonly id: string;
  /** The fencing-token counter, in the lock's slot. */
  protected readonly fenceKey: string;
  /** Channel the release script publishes on. */
  readonly channel: string;
  /** @internal See LockKindContract. */
  readonly messages: ChannelMessages;
  /** @internal See LockKindContract. */
  readonly shared: boolean = false;
  /** @internal See LockKindContract: every lock kind is reentrant. */
  readonly countsHolds = true;
  /** @internal See LeaseResource: kinds that hand the lock over (the plain lock) return it. */
  get handover(): LockHandover | undefined {
    return undefined;
  }

  /** @internal `protocol`: the kind's (its key variant, so that kinds under one name never meet, and its messages' codec). */
  protected constructor(
    /** @internal */
    protected readonly runtime: LockRuntime,
    readonly name: string,
    protocol: Pick<LockProtocol, 'variant' | 'messages'>,
  ) {
    this.id = runtime.keys.lock(name, protocol.variant);
    this.fenceKey = runtime.keys.fence(name);
    this.channel = runtime.keys.channel(name, protocol.variant);
    this.messages = protocol.messages;
  }

  /** @internal See LockKindContract. */
  get maxPauseMs(): number {
    return Infinity;
  }

  /** @internal One acquisition attempt, one round trip (see LockKindContract). */
  abstract attempt(args: AttemptArgs): Promise<AttemptResult>;
  /** @internal */
  abstract adjustHolds(owner: string, holds: number): Promise<void>;
  /** @internal */
  abstract renew(owner: string, leaseMs: number, replicaAck: ReplicaAck | undefined): Promise<RenewResult>;
  /** @internal */
  abstract release(owner: string, all: boolean, expectedHolds?: number, token?: number): Promise<ReleaseReply>;

  /** Whether anyone holds the lock. */
  abstract isLocked(): Promise<boolean>;
  /** How many times the current lock context holds it (0 when not held or outside any context). */
  abstract getHoldCount(): Promise<number>;
  /** Remaining lease in ms; -2 when not locked, -1 when locked without expiry (Redis PTTL). */
  abstract remainTimeToLive(): Promise<number>;
  /** Deletes the lock whoever holds it and wakes a waiter. True if there was a lock to delete. */
  abstract forceUnlock(): Promise<boolean>;

  /**
   * Who holds this lock, since when, how long its lease has left, whether the watchdog renews it, and
   * who waits, as Redis has it now (one script: a consistent snapshot). See LockClient.inspect.
   */
  inspect(): Promise<LockInspection> {
    return this.runtime.inspect(this.name, this.kind === 'read' || this.kind === 'write' ? 'read-write' : this.kind);
  }

  /** Whether the current lock context holds it (Redisson: isHeldByCurrentThread). */
  async isHeldByCurrentContext(): Promise<boolean> {
    return (await this.getHoldCount()) > 0;
  }

  /**
   * Acquires, waiting as long as it takes (Redisson `lock()`); with `waitTime`, throws
   * LockAcquireTimeoutError when the wait is over. A duration given alone is the lease (Redisson's
   * `lock(leaseTime)`, no watchdog); the wait is bounded only by `{ waitTime }`.
   */
  async lock(leaseTimeOrOptions?: Duration | LockOptions): Promise<LockHandle> {
    const request = lockRequest(leaseTimeOrOptions);
    const outcome = await this.acquire(this.runtime.currentOwner(), request);
    if ('ttl' in outcome) throw this.runtime.timeoutError(this.name, request.waitMs, outcome.ttl);
    return outcome;
  }

  /**
   * Acquires if possible within `waitTime` (default: no wait); resolves false otherwise. A duration given
   * alone is the wait (Redisson's `tryLock(waitTime, leaseTime)`); the lease comes second, or as `{ leaseTime }`.
   */
  async tryLock(waitTimeOrOptions?: Duration | TryLockOptions, leaseTime?: Duration): Promise<LockHandle | false> {
    const request = tryLockRequest(waitTimeOrOptions, leaseTime);
    const outcome = await this.acquire(this.runtime.currentOwner(), request);
    return 'ttl' in outcome ? false : outcome;
  }

  /**
   * Runs `fn` under this lock and always releases it; `fn` gets the handle (token, signal), and code
   * it calls is the same owner, so it may re-enter.
   */
  withLock<T>(fn: (lock: LockHandle) => T | Promise<T>, options?: LockOptions): Promise<T> {
    return withLockOn(this.runtime, this.name, () => this.lock(options), fn);
  }

  /**
   * Releases one hold taken by the current lock context. Outside any context (a script, a cron job,
   * `onModuleInit`), it releases the acquisition made outside a context that holds this lock in this
   * process: `lock(name)` then `unlock(name)` works there too (see LockEngine.byName).
   */
  async unlock(): Promise<void> {
    const named = this.runtime.byName(this);
    if (named.owner === undefined) throw new LockNotHeldError(this.name, named.why);
    const held = this.runtime.held.find(registryKey(named.owner, this));
    if (!held)
      throw new LockNotHeldError(
        this.name,
        getLockContext() ? 'the current lock context does not hold it' : 'no acquisition made outside a context holds it in this process',
      );
    await this.runtime.release(held);
  }

  /** @internal Acquires for `owner`, waiting per `request` (see Acquisition). */
  acquire(owner: Owner, request: AcquireRequest): Promise<AcquireOutcome> {
    return new Acquisition(this, this.runtime, owner, request).run();
  }

  /** The owner whose holds a by-name query counts (see LockEngine.byName), or undefined. */
  protected ownerByName(): string | undefined {
    return this.runtime.byName(this).owner;
  }
}
