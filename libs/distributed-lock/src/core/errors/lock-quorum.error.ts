import { LockBackendError } from './lock-backend.error.js';

/** RedLock: fewer than a majority of the independent nodes answered, so nothing can be decided. */
export class LockQuorumError extends LockBackendError {
  constructor(
    lockName: string,
    readonly answered: number,
    readonly nodes: number,
    cause: unknown,
  ) {
    super('lock', lockName, cause, {
      code: 'LOCK_QUORUM_FAILED',
      message:
        `RedLock on "${lockName}": only ${answered} of ${nodes} Redis nodes answered, and a decision needs ${Math.floor(nodes / 2) + 1}. ` +
        `Nothing is held (partial grants were released). Bring the nodes back, or retry later.`,
    });
  }
}
