import type { ReplicaAck } from '../../config/replica-ack.js';
import type { RenewResult } from '../../engine/lease-resource.js';
import { BaseLock } from '../base-lock.js';
import type { LockServices } from '../lock-services.js';
import { confirmGrant, confirmRenewal } from '../replica-confirmation.js';
import { ExclusiveHash } from './exclusive-hash.js';

/**
 * What the plain and the fair lock share: the holder lives in an ExclusiveHash on the kind's own key,
 * so renewal, hold adjustment, the reads and force unlock are the same calls on it. Each kind adds its
 * own acquisition (and release: whether its waiters mark their process) on top.
 */
export abstract class ExclusiveHashLock extends BaseLock {
  protected readonly hash: ExclusiveHash;

  /** `waitersMark`: see ExclusiveHash (the plain lock's waiters mark their process; the fair lock's queue). */
  protected constructor(services: LockServices, name: string, variant: string, waitersMark: boolean) {
    super(services, name, variant);
    this.hash = new ExclusiveHash(services, { lock: this.id, fence: this.fenceKey, channel: this.channel }, waitersMark);
  }

  async renew(owner: string, leaseMs: number, replicaAck: ReplicaAck | undefined): Promise<RenewResult> {
    return confirmRenewal(this.services, this, await this.hash.renew(owner, leaseMs), leaseMs, replicaAck);
  }

  async adjustHolds(owner: string, holds: number): Promise<void> {
    await this.hash.adjust(owner, holds);
  }

  isLocked(): Promise<boolean> {
    return this.services.query('isLocked', this.name, () => this.hash.exists());
  }

  async getHoldCount(): Promise<number> {
    const owner = this.ownerByName();
    return owner ? this.services.query('getHoldCount', this.name, () => this.hash.holdsOf(owner)) : 0;
  }

  remainTimeToLive(): Promise<number> {
    return this.services.query('remainTimeToLive', this.name, () => this.hash.pttl());
  }

  async forceUnlock(): Promise<boolean> {
    const deleted = await this.services.query('forceUnlock', this.name, () => this.hash.forceDelete());
    this.services.holds.markResourceLost(this, 'force-unlocked');
    return deleted;
  }

  /** After a grant, with `replicaAck`: that many replicas must have it, or the hold is taken back (see confirmGrant). */
  protected confirmGrant(owner: string, replicaAck: ReplicaAck): Promise<void> {
    return confirmGrant(this.services, this, replicaAck, () => this.hash.release(owner, false, undefined, false));
  }
}
