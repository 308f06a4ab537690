import { DistributedLockError } from './distributed-lock.error.js';

/** A lock call got a bad argument (name, duration, option). Thrown before any Redis call. */
export class InvalidLockArgumentError extends DistributedLockError {
  readonly code = 'LOCK_INVALID_ARGUMENT' as const;

  constructor(
    readonly argument: string,
    message: string,
  ) {
    super(`Invalid ${argument}: ${message}`);
  }
}
