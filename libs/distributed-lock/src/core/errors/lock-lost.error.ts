import { DistributedLockError } from './distributed-lock.error.js';

/** Why a lock was lost; `resigned`: a leadership given up by its leader (see LeaderElection). */
export type LockLostReason = 'lease-expired' | 'not-owner' | 'force-unlocked' | 'client-closed' | 'resigned';

const EXPLANATION: Record<LockLostReason, string> = {
  'lease-expired': 'its lease ran out before it was released or renewed (process pause, Redis unreachable, or leaseTime shorter than the work)',
  'not-owner': 'Redis no longer records this owner as its holder (its key expired or was deleted, and may belong to someone else now)',
  'force-unlocked': 'it was force-unlocked',
  'client-closed': 'the lock client was closed while the lock was held',
  resigned: 'its leader resigned or stepped down, and the leadership goes to the next candidate',
};

/**
 * The reason given to a held lock's AbortSignal when the lock is lost. Work that was protected by
 * the lock must stop; writes must carry the fencing token so that the resource rejects stale ones.
 */
export class LockLostError extends DistributedLockError {
  readonly code = 'LOCK_LOST' as const;

  constructor(
    readonly lockName: string,
    readonly reason: LockLostReason,
  ) {
    super(`Lock "${lockName}" was lost: ${EXPLANATION[reason]}. Stop the protected work; another owner may hold it now.`);
  }
}
