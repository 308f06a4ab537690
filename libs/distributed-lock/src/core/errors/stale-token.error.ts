import { DistributedLockError } from './distributed-lock.error.js';

/**
 * A fenced read or write was refused: the resource has already seen a higher fencing token, so a
 * newer holder of the lock exists and this caller's lock was lost (lease ran out during a pause,
 * a failover, a force unlock). Nothing was changed. Tokens are exact integers (below 2^53).
 */
export class StaleTokenError extends DistributedLockError {
  readonly code = 'LOCK_STALE_TOKEN' as const;

  constructor(
    /** The token the refused call carried. */
    readonly token: number,
    /** The highest token the resource has seen. */
    readonly highestSeen: number,
    /** Where the resource keeps it. */
    readonly fenceKey: string,
  ) {
    super(
      `A call fenced with token ${token} was refused: the resource (${fenceKey}) has seen token ${highestSeen} from a newer holder of the lock, ` +
        'so this lock was lost while the work ran. Stop this work; take the lock again and redo it from a fresh read.',
    );
  }
}
