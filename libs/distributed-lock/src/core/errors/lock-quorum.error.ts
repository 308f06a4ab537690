import { LockBackendError } from './lock-backend.error.js';

const OUTCOME = {
  lock: 'Nothing is held (partial grants were released). Bring the nodes back, or retry later.',
  unlock: 'The release is retried in the background until a majority answers, or the lease runs out.',
} as const;

/** RedLock: fewer than a majority of the independent nodes answered, so nothing can be decided. */
export class LockQuorumError extends LockBackendError {
  constructor(
    lockName: string,
    readonly answered: number,
    readonly nodes: number,
    cause: unknown,
    operation: 'lock' | 'unlock' = 'lock',
  ) {
    super(operation, lockName, cause, {
      code: 'LOCK_QUORUM_FAILED',
      message: `RedLock on "${lockName}": only ${answered} of ${nodes} Redis nodes answered, and a decision needs ${Math.floor(nodes / 2) + 1}. ${OUTCOME[operation]}`,
    });
  }
}
