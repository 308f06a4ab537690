import type { ReplicaAck } from '../config/replica-ack.js';
import type { RenewResult } from '../lock/lease-resource.js';
import type { LockEngine } from '../lock/lock-engine.js';
import type { AttemptResult } from './base-lock.js';
import { GRANT_LEASE_MS } from '../waiting/unlock-notifier.js';
import { SingleNodeLock } from './single-node-lock.js';

/**
 * Redisson's RLock: an exclusive lock that its owner (a lock context) may take again. Each
 * acquisition adds a hold, each unlock removes one; the key is deleted and one waiter woken at zero.
 * Lives on one node: a single Redis, the master of a master-slave or sentinel set, or the master of
 * the lock's slot in a cluster.
 */
export class ReentrantLock extends SingleNodeLock {
  readonly kind: 'reentrant' | 'fair' = 'reentrant';

  constructor(engine: LockEngine, name: string, variant = '') {
    super(engine, name, variant);
  }

  protected async attempt(owner: string, leaseMs: number, replicaAck: ReplicaAck | undefined, willWait: boolean, queued: boolean): Promise<AttemptResult> {
    // A caller that will wait marks this process as waiting when it fails (see the acquire script);
    // a queued one that succeeds tells whether callers of this process still wait after it.
    const [first, second] = await this.engine.node.scripts.reentrantAcquire(
      this.id,
      this.fenceKey,
      owner,
      leaseMs,
      willWait ? this.engine.clientId : '',
      queued ? (this.engine.notifier.waiterCount(this.channel) > 1 ? '1' : '0') : '',
    );
    if (first <= 0) return { acquired: false, ttl: second };
    await this.confirmGrant(owner, replicaAck);
    return { acquired: true, token: first, holds: second };
  }

  async renew(owner: string, leaseMs: number, replicaAck: ReplicaAck | undefined): Promise<RenewResult> {
    const renewed = (await this.engine.node.scripts.reentrantRenew(this.id, owner, leaseMs)) === 1;
    return this.confirmRenewal(renewed, leaseMs, replicaAck);
  }

  protected async adjustHolds(owner: string, holds: number): Promise<void> {
    await this.engine.node.scripts.reentrantAdjust(this.id, owner, holds);
  }

  override get handsOver(): boolean {
    return true;
  }

  override handOver(owner: string, successor: string, leaseMs: number, yieldToOthers: boolean, successorIsLast: boolean): Promise<[number, number]> {
    return this.engine.node.scripts.reentrantHandoff(
      this.id,
      this.fenceKey,
      this.channel,
      owner,
      successor,
      leaseMs,
      this.engine.clientId,
      yieldToOthers ? '1' : '0',
      this.engine.publishCommand,
      successorIsLast ? '1' : '0',
      GRANT_LEASE_MS,
    );
  }

  protected override async unmark(): Promise<void> {
    await this.engine.bounded(
      this.engine.node.scripts.reentrantUnmark(this.id, this.channel, this.fenceKey, this.engine.clientId, this.engine.publishCommand, GRANT_LEASE_MS),
    );
  }

  release(owner: string, all: boolean, expectedHolds?: number): Promise<number> {
    return this.engine.node.scripts.reentrantRelease(
      this.id,
      this.channel,
      this.fenceKey,
      owner,
      this.engine.publishCommand,
      all ? 'all' : '1',
      expectedHolds ?? '',
      GRANT_LEASE_MS,
      this.handsOver && this.engine.notifier.waiterCount(this.channel) > 0 ? this.engine.clientId : '',
    );
  }

  /** Stale by design (the answer can change as soon as it is given): a replica may answer it. */
  async isLocked(): Promise<boolean> {
    return (await this.query('isLocked', () => this.engine.staleReader().exists(this.id))) === 1;
  }

  async getHoldCount(): Promise<number> {
    const mine = this.ownerByName();
    if (!mine) return 0;
    const [owner, holds] = await this.query('getHoldCount', () => this.engine.redis.hmget(this.id, 'owner', 'holds'));
    return owner === mine ? Number(holds) : 0;
  }

  /** Stale by design, like isLocked: a replica may answer it. */
  remainTimeToLive(): Promise<number> {
    return this.query('remainTimeToLive', () => this.engine.staleReader().pttl(this.id));
  }

  async forceUnlock(): Promise<boolean> {
    const deleted = await this.query('forceUnlock', () => this.engine.node.scripts.forceUnlock(this.id, this.channel, this.engine.publishCommand));
    this.engine.markResourceLost(this, 'force-unlocked');
    return deleted === 1;
  }
}
