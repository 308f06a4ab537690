import type { ReplicaAck } from '../config/replica-ack.js';
import type { RenewResult } from '../engine/lease-resource.js';
import type { LockEngine } from '../engine/lock-engine.js';
import type { ExclusiveKeys } from '../scripts/exclusive-keys.js';
import { ExclusiveHash } from './exclusive-hash.js';
import { SingleNodeLock } from './single-node-lock.js';

/**
 * What the plain and the fair lock share: the holder lives in an ExclusiveHash on the kind's own key,
 * so renewal, hold adjustment, the reads and force unlock are the same calls on it. Each kind adds its
 * own acquisition (and release: whether its waiters mark their process) on top.
 */
export abstract class ExclusiveHashLock extends SingleNodeLock {
  /** The kind's keys: its hash, the name's fencing counter, its channel. */
  protected readonly keys: ExclusiveKeys;
  protected readonly hash: ExclusiveHash;

  /** `waitersMark`: see ExclusiveHash (the plain lock's waiters mark their process; the fair lock's queue). */
  protected constructor(engine: LockEngine, name: string, variant: string, waitersMark: boolean) {
    super(engine, name, variant);
    this.keys = { lock: this.id, fence: this.fenceKey, channel: this.channel };
    this.hash = new ExclusiveHash(engine, this.keys, waitersMark);
  }

  async renew(owner: string, leaseMs: number, replicaAck: ReplicaAck | undefined): Promise<RenewResult> {
    return this.confirmRenewal((await this.hash.renew(owner, leaseMs)) === 1, leaseMs, replicaAck);
  }

  async adjustHolds(owner: string, holds: number): Promise<void> {
    await this.hash.adjust(owner, holds);
  }

  isLocked(): Promise<boolean> {
    return this.query('isLocked', () => this.hash.exists());
  }

  async getHoldCount(): Promise<number> {
    const owner = this.ownerByName();
    return owner ? this.query('getHoldCount', () => this.hash.holdsOf(owner)) : 0;
  }

  remainTimeToLive(): Promise<number> {
    return this.query('remainTimeToLive', () => this.hash.pttl());
  }

  async forceUnlock(): Promise<boolean> {
    const deleted = await this.query('forceUnlock', () => this.hash.forceDelete());
    this.engine.markResourceLost(this, 'force-unlocked');
    return deleted;
  }
}
