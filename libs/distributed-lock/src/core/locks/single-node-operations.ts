import type { ReplicaAck } from '../config/replica-ack.js';
import type { RenewResult } from '../engine/lease-resource.js';
import type { LockEngine } from '../engine/lock-engine.js';
import { ReplicaAckError } from '../errors/replica-ack.error.js';

/** What the single-node operations need to know about the resource they act on. */
export interface SingleNodeResource {
  readonly name: string;
  /** A key of the resource: WAIT rides behind a read of it, to reach the master of its slot. */
  readonly id: string;
  release(owner: string, all: boolean): Promise<number>;
}

/**
 * The steps every kind whose state lives on one node shares (the locks of SingleNodeLock, and the
 * semaphore): replica acknowledgement of grants and renewals, and bounded, typed queries.
 *
 * After a grant, when the caller asked for replica acknowledgement (callers skip the call without
 * it: nothing to wait for, and no promise on the lock path): waits for that many replicas to have
 * it; on a shortfall the hold is taken back (it would not survive a failover) and ReplicaAckError is
 * thrown.
 */
export async function confirmGrant(engine: LockEngine, resource: SingleNodeResource, owner: string, replicaAck: ReplicaAck): Promise<void> {
  const acknowledged = await engine.node.waitForReplicas(resource.id, replicaAck.replicas, replicaAck.timeoutMs);
  if (acknowledged < replicaAck.replicas) {
    await resource.release(owner, false).catch((error: unknown) => engine.background.report('release', resource.name, error));
    throw new ReplicaAckError(resource.name, acknowledged, replicaAck.replicas, replicaAck.timeoutMs);
  }
}

/** The outcome of a renewal script (true: renewed), confirmed by replicas when asked to be. */
export async function confirmRenewal(
  engine: LockEngine,
  resource: SingleNodeResource,
  renewed: boolean,
  leaseMs: number,
  replicaAck: ReplicaAck | undefined,
): Promise<RenewResult> {
  if (!renewed) return { renewed: false, lost: true };
  if (replicaAck) {
    const acknowledged = await engine.node.waitForReplicas(resource.id, replicaAck.replicas, replicaAck.timeoutMs);
    if (acknowledged < replicaAck.replicas) {
      engine.background.report('renew', resource.name, new ReplicaAckError(resource.name, acknowledged, replicaAck.replicas, replicaAck.timeoutMs));
      return { renewed: false, lost: false };
    }
  }
  return { renewed: true, validityMs: leaseMs };
}

/** One bounded read or administrative call; failures become LockBackendError. */
export async function boundedQuery<T>(engine: LockEngine, name: string, operation: string, run: () => Promise<T>): Promise<T> {
  engine.assertOpen(`${operation} "${name}"`);
  try {
    return await engine.roundTrips.bounded(run());
  } catch (error) {
    throw engine.roundTrips.failure(operation, name, error);
  }
}
