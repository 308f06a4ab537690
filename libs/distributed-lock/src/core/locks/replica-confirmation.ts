import type { ReplicaAck } from '../config/replica-ack.js';
import type { RenewResult } from '../engine/lease-resource.js';
import { ReplicaAckError } from '../errors/replica-ack.error.js';
import type { LockRuntime } from '../engine/lock-runtime.js';

/** What replica acknowledgement needs to know about the resource it confirms. */
export interface ConfirmedResource {
  readonly name: string;
  /** A key of the resource: WAIT rides behind a read of it, to reach the master of its slot. */
  readonly id: string;
}

/**
 * Replica acknowledgement of a grant (kinds whose state lives on one node: single, master-slave,
 * sentinel, cluster). Called only when the caller asked for it (callers skip the call without it:
 * nothing to wait for, and no promise on the lock path): waits for that many replicas to have the
 * grant; on a shortfall `undo` takes the hold back (it would not survive a failover) and
 * ReplicaAckError is thrown.
 */
export async function confirmGrant(runtime: LockRuntime, resource: ConfirmedResource, replicaAck: ReplicaAck, undo: () => Promise<unknown>): Promise<void> {
  const acknowledged = await runtime.nodes[0]!.waitForReplicas(resource.id, replicaAck.replicas, replicaAck.timeoutMs);
  if (acknowledged < replicaAck.replicas) {
    await undo().catch((error: unknown) => runtime.background.report('release', resource.name, error));
    throw new ReplicaAckError(resource.name, acknowledged, replicaAck.replicas, replicaAck.timeoutMs);
  }
}

/** The outcome of a renewal script (true: renewed), confirmed by replicas when asked to be. */
export async function confirmRenewal(
  runtime: LockRuntime,
  resource: ConfirmedResource,
  renewed: boolean,
  leaseMs: number,
  replicaAck: ReplicaAck | undefined,
): Promise<RenewResult> {
  if (!renewed) return { renewed: false, lost: true };
  if (replicaAck) {
    const acknowledged = await runtime.nodes[0]!.waitForReplicas(resource.id, replicaAck.replicas, replicaAck.timeoutMs);
    if (acknowledged < replicaAck.replicas) {
      runtime.background.report('renew', resource.name, new ReplicaAckError(resource.name, acknowledged, replicaAck.replicas, replicaAck.timeoutMs));
      return { renewed: false, lost: false };
    }
  }
  return { renewed: true, validityMs: leaseMs };
}
