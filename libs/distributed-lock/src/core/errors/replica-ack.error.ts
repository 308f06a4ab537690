import { LockBackendError } from './lock-backend.error.js';

/**
 * Replica acknowledgement was required and fewer replicas confirmed the write in time. The
 * acquisition was undone: a failover could otherwise lose the lock.
 */
export class ReplicaAckError extends LockBackendError {
  constructor(
    lockName: string,
    readonly acknowledged: number,
    readonly required: number,
    timeoutMs: number,
  ) {
    super('lock', lockName, new Error(`WAIT ${required} ${timeoutMs} returned ${acknowledged}`), {
      code: 'LOCK_REPLICA_ACK_FAILED',
      message:
        `Lock "${lockName}" was acquired on the master but only ${acknowledged} of the required ${required} replicas ` +
        `acknowledged it within ${timeoutMs} ms, so it was released again. Check the replicas, or lower replicaAck.replicas.`,
    });
  }
}
