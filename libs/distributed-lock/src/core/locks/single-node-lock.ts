import type { ReplicaAck } from '../config/replica-ack.js';
import { ReplicaAckError } from '../errors/replica-ack.error.js';
import type { RenewResult } from '../engine/lease-resource.js';
import { BaseLock } from './base-lock.js';

/**
 * A lock kind whose state lives on one node: a single Redis, the master of a master-slave or sentinel
 * set, or the master of the lock's slot in a cluster. Adds what those kinds share: replica
 * acknowledgement of grants and renewals, and bounded, typed queries.
 */
export abstract class SingleNodeLock extends BaseLock {
  /**
   * After a grant: with `replicaAck`, waits for that many replicas to have it; on a shortfall the
   * hold is taken back (it would not survive a failover) and ReplicaAckError is thrown.
   */
  protected async confirmGrant(owner: string, replicaAck: ReplicaAck | undefined): Promise<void> {
    if (!replicaAck) return;
    const acknowledged = await this.engine.node.waitForReplicas(this.id, replicaAck.replicas, replicaAck.timeoutMs);
    if (acknowledged < replicaAck.replicas) {
      await this.release(owner, false).catch((error: unknown) => this.engine.background.report('release', this.name, error));
      throw new ReplicaAckError(this.name, acknowledged, replicaAck.replicas, replicaAck.timeoutMs);
    }
  }

  /** The outcome of a renewal script (1: renewed), confirmed by replicas when asked to be. */
  protected async confirmRenewal(renewed: boolean, leaseMs: number, replicaAck: ReplicaAck | undefined): Promise<RenewResult> {
    if (!renewed) return { renewed: false, lost: true };
    if (replicaAck) {
      const acknowledged = await this.engine.node.waitForReplicas(this.id, replicaAck.replicas, replicaAck.timeoutMs);
      if (acknowledged < replicaAck.replicas) {
        this.engine.background.report('renew', this.name, new ReplicaAckError(this.name, acknowledged, replicaAck.replicas, replicaAck.timeoutMs));
        return { renewed: false, lost: false };
      }
    }
    return { renewed: true, validityMs: leaseMs };
  }

  /** One bounded read or administrative call; failures become LockBackendError. */
  protected async query<T>(operation: string, run: () => Promise<T>): Promise<T> {
    this.engine.assertOpen(`${operation} "${this.name}"`);
    try {
      return await this.engine.roundTrips.bounded(run());
    } catch (error) {
      throw this.engine.roundTrips.failure(operation, this.name, error);
    }
  }
}
