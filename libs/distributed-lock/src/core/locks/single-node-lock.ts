import type { ReplicaAck } from '../config/replica-ack.js';
import type { RenewResult } from '../engine/lease-resource.js';
import { BaseLock } from './base-lock.js';
import { boundedQuery, confirmGrant, confirmRenewal } from './single-node-operations.js';

/**
 * A lock kind whose state lives on one node: a single Redis, the master of a master-slave or sentinel
 * set, or the master of the lock's slot in a cluster. Adds what those kinds share (with the
 * semaphore: single-node-operations.ts): replica acknowledgement of grants and renewals, and bounded,
 * typed queries.
 */
export abstract class SingleNodeLock extends BaseLock {
  /**
   * After a grant: with `replicaAck`, waits for that many replicas to have it; on a shortfall the
   * hold is taken back (it would not survive a failover) and ReplicaAckError is thrown.
   */
  protected confirmGrant(owner: string, replicaAck: ReplicaAck): Promise<void> {
    return confirmGrant(this.engine, this, owner, replicaAck);
  }

  /** The outcome of a renewal script (1: renewed), confirmed by replicas when asked to be. */
  protected confirmRenewal(renewed: boolean, leaseMs: number, replicaAck: ReplicaAck | undefined): Promise<RenewResult> {
    return confirmRenewal(this.engine, this, renewed, leaseMs, replicaAck);
  }

  /** One bounded read or administrative call; failures become LockBackendError. */
  protected query<T>(operation: string, run: () => Promise<T>): Promise<T> {
    return boundedQuery(this.engine, this.name, operation, run);
  }
}
