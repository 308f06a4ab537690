import type { ReplicaAck } from '../config/replica-ack.js';
import { getLockContext } from '../context/lock-context.js';
import { LockBackendError } from '../errors/lock-backend.error.js';
import { ReplicaAckError } from '../errors/replica-ack.error.js';
import type { RenewResult } from '../lock/lease-resource.js';
import type { LockEngine } from '../lock/lock-engine.js';
import { BaseLock, type AttemptResult } from './base-lock.js';

/**
 * Redisson's RLock: an exclusive lock that its owner (a lock context) may take again. Each
 * acquisition adds a hold, each unlock removes one; the key is deleted and one waiter woken at zero.
 * Lives on one node: a single Redis, the master of a master-slave or sentinel set, or the master of
 * the lock's slot in a cluster.
 */
export class ReentrantLock extends BaseLock {
  readonly kind = 'reentrant' as const;

  constructor(engine: LockEngine, name: string) {
    super(engine, name);
  }

  protected async attempt(owner: string, leaseMs: number, replicaAck: ReplicaAck | undefined): Promise<AttemptResult> {
    const node = this.engine.node;
    const [first, second] = await node.scripts.reentrantAcquire(this.id, this.fenceKey, owner, leaseMs);
    if (first <= 0) return { acquired: false, ttl: second };
    if (replicaAck) {
      const acknowledged = await node.waitForReplicas(this.id, replicaAck.replicas, replicaAck.timeoutMs);
      if (acknowledged < replicaAck.replicas) {
        // Not safe against a failover: take the hold back before reporting it.
        await this.release(owner, false).catch((error: unknown) => this.engine.reportBackground('release', this.name, error));
        throw new ReplicaAckError(this.name, acknowledged, replicaAck.replicas, replicaAck.timeoutMs);
      }
    }
    return { acquired: true, token: first, holds: second };
  }

  async renew(owner: string, leaseMs: number, replicaAck: ReplicaAck | undefined): Promise<RenewResult> {
    const node = this.engine.node;
    if ((await node.scripts.reentrantRenew(this.id, owner, leaseMs)) !== 1) return { renewed: false, lost: true };
    if (replicaAck) {
      const acknowledged = await node.waitForReplicas(this.id, replicaAck.replicas, replicaAck.timeoutMs);
      if (acknowledged < replicaAck.replicas) {
        this.engine.reportBackground('renew', this.name, new ReplicaAckError(this.name, acknowledged, replicaAck.replicas, replicaAck.timeoutMs));
        return { renewed: false, lost: false };
      }
    }
    return { renewed: true, validityMs: leaseMs };
  }

  protected async adjustHolds(owner: string, holds: number): Promise<void> {
    await this.engine.node.scripts.reentrantAdjust(this.id, owner, holds);
  }

  release(owner: string, all: boolean, expectedHolds?: number): Promise<number> {
    return this.engine.node.scripts.reentrantRelease(this.id, this.channel, owner, this.engine.publishCommand, all ? 'all' : '1', expectedHolds ?? '');
  }

  /** Stale by design (the answer can change as soon as it is given): a replica may answer it. */
  async isLocked(): Promise<boolean> {
    return (await this.query('isLocked', () => this.engine.staleReader().exists(this.id))) === 1;
  }

  async getHoldCount(): Promise<number> {
    const context = getLockContext();
    if (!context) return 0;
    const [owner, holds] = await this.query('getHoldCount', () => this.engine.redis.hmget(this.id, 'owner', 'holds'));
    return owner === this.engine.ownerOf(context) ? Number(holds) : 0;
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

  private async query<T>(operation: string, run: () => Promise<T>): Promise<T> {
    this.engine.assertOpen(`${operation} "${this.name}"`);
    try {
      return await this.engine.bounded(run());
    } catch (error) {
      throw new LockBackendError(operation, this.name, error);
    }
  }
}
