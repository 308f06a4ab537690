import { OWNER_FIELDS, type ExclusiveKeys } from './exclusive-keys.js';
import type { LockRuntime } from '../../engine/lock-runtime.js';
import type { ReleaseReply } from '../../scripts/lock-script.js';
import type { RenewResult } from '../../engine/lease-resource.js';
import type { ReplicaAck } from '../../config/replica-ack.js';
import { BaseLock } from '../base-lock.js';
import type { LockProtocol } from '../lock-protocol.js';
import { GRANT_LEASE_MS } from './exclusive.messages.js';
import { confirmGrant, confirmRenewal } from '../replica-confirmation.js';
import { exclusiveAdjust } from './exclusive-adjust.script.js';
import { exclusiveRelease } from './exclusive-release.script.js';
import { exclusiveRenew } from './exclusive-renew.script.js';
import { forceUnlock } from './force-unlock.script.js';

/**
 * The hash `{owner, holds, token}` in which the plain and the fair lock keep their holder: renewal,
 * release (which grants the lock to the process that has waited longest, see the release script),
 * hold adjustment, force unlock and reads. Each kind composes one, on its own key.
 */
export class ExclusiveHash {
  /** `waitersMark`: the kind's waiters mark their process in the hash (the plain lock; not the fair lock). */
  constructor(
    private readonly runtime: LockRuntime,
    readonly keys: ExclusiveKeys,
    private readonly waitersMark: boolean,
  ) {}

  /** Whether `owner` holds it, its lease now lengthened. */
  renew(owner: string, leaseMs: number): Promise<boolean> {
    return this.runtime.nodes[0]!.run(exclusiveRenew, { lock: this.keys.lock, owner, leaseMs });
  }

  /**
   * Drops one hold (or all). `firstWaitingHere`: the first caller of this process still waiting for the
   * lock, if any, so that when it goes to another process this one is marked as waiting, at the back,
   * naming that caller.
   */
  release(
    owner: string,
    all: boolean,
    expectedHolds: number | undefined,
    firstWaitingHere: string | undefined,
    token?: number,
    unclaimedGrant?: boolean,
  ): Promise<ReleaseReply> {
    const { lock, fence, channel } = this.keys;
    return this.runtime.nodes[0]!.run(exclusiveRelease, {
      lock,
      fence,
      channel,
      owner,
      publish: this.runtime.publishCommand(),
      all,
      expectedHolds,
      grantLeaseMs: GRANT_LEASE_MS,
      stillWaitingClient: firstWaitingHere === undefined ? '' : this.runtime.clientId,
      stillWaitingFirst: firstWaitingHere ?? '',
      alwaysPublish: !this.waitersMark,
      token,
      unclaimedGrant,
    });
  }

  async adjust(owner: string, holds: number): Promise<void> {
    await this.runtime.nodes[0]!.run(exclusiveAdjust, { lock: this.keys.lock, owner, holds });
  }

  /** `owner`'s holds (0 when another owner holds it, or nobody). */
  async holdsOf(owner: string): Promise<number> {
    const [holder, holds] = await this.runtime.nodes[0]!.redis.hmget(this.keys.lock, OWNER_FIELDS);
    return holder === owner ? Number(holds) : 0;
  }

  /** Stale by design (the answer can change as soon as it is given): a replica may answer it. */
  async exists(): Promise<boolean> {
    return (await this.runtime.staleReader().exists(this.keys.lock)) === 1;
  }

  /** Stale by design, like `exists`. */
  pttl(): Promise<number> {
    return this.runtime.staleReader().pttl(this.keys.lock);
  }

  /** Deletes it whoever holds it and publishes the release. True if there was one. */
  forceDelete(): Promise<boolean> {
    return this.runtime.nodes[0]!.run(forceUnlock, { lock: this.keys.lock, channel: this.keys.channel, publish: this.runtime.publishCommand() });
  }
}

/**
 * What the plain and the fair lock share: the holder lives in an ExclusiveHash on the kind's own key,
 * so renewal, hold adjustment, the reads and force unlock are the same calls on it. Each kind adds its
 * own acquisition (and release: whether its waiters mark their process) on top.
 */
export abstract class ExclusiveHashLock extends BaseLock {
  /** @internal */
  protected readonly hash: ExclusiveHash;

  /** @internal `waitersMark`: see ExclusiveHash (the plain lock's waiters mark their process; the fair lock's queue). */
  protected constructor(runtime: LockRuntime, name: string, protocol: LockProtocol, waitersMark: boolean) {
    super(runtime, name, protocol);
    this.hash = new ExclusiveHash(runtime, { lock: this.id, fence: this.fenceKey, channel: this.channel }, waitersMark);
  }

  /** @internal See LeaseResource. */
  async renew(owner: string, leaseMs: number, replicaAck: ReplicaAck | undefined): Promise<RenewResult> {
    return confirmRenewal(this.runtime, this, await this.hash.renew(owner, leaseMs), leaseMs, replicaAck);
  }

  /** @internal See LockKindContract. */
  async adjustHolds(owner: string, holds: number): Promise<void> {
    await this.hash.adjust(owner, holds);
  }

  isLocked(): Promise<boolean> {
    return this.runtime.query('isLocked', this.name, () => this.hash.exists());
  }

  async getHoldCount(): Promise<number> {
    const owner = this.ownerByName();
    return owner ? this.runtime.query('getHoldCount', this.name, () => this.hash.holdsOf(owner)) : 0;
  }

  remainTimeToLive(): Promise<number> {
    return this.runtime.query('remainTimeToLive', this.name, () => this.hash.pttl());
  }

  async forceUnlock(): Promise<boolean> {
    const deleted = await this.runtime.query('forceUnlock', this.name, () => this.hash.forceDelete());
    this.runtime.markResourceLost(this, 'force-unlocked');
    return deleted;
  }

  /** @internal After a grant, with `replicaAck`: that many replicas must have it, or the hold is taken back (see confirmGrant). */
  protected confirmGrant(owner: string, replicaAck: ReplicaAck): Promise<void> {
    return confirmGrant(this.runtime, this, replicaAck, () => this.hash.release(owner, false, undefined, undefined));
  }
}
