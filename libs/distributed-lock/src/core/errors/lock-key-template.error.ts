import { DistributedLockError } from './distributed-lock.error.js';

/**
 * A lock key template (`'product:{params.id}'`) refers to a request field that is missing or not a
 * scalar. Over HTTP this becomes 400 and the handler is not run.
 */
export class LockKeyTemplateError extends DistributedLockError {
  readonly code = 'LOCK_KEY_TEMPLATE' as const;

  constructor(
    readonly template: string,
    readonly path: string,
    problem: string,
  ) {
    super(`Lock key template "${template}" needs ${path}, which ${problem}.`);
  }
}
