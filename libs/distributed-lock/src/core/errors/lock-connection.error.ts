import { DistributedLockError } from './distributed-lock.error.js';

/** Redis could not be reached or refused us (auth, TLS) at start-up. */
export class LockConnectionError extends DistributedLockError {
  readonly code = 'LOCK_CONNECTION_FAILED' as const;

  constructor(
    readonly target: string,
    detail: string,
    cause?: unknown,
  ) {
    super(`Could not connect to Redis (${target}): ${detail}`, { cause });
  }
}
