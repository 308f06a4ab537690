import { DistributedLockError } from './distributed-lock.error.js';

/**
 * A lock name template (`'product:{params.id}'`) refers to a request field that is missing or not a
 * scalar. Over HTTP this becomes 400 and the handler is not run.
 */
export class LockNameTemplateError extends DistributedLockError {
  readonly code = 'LOCK_NAME_TEMPLATE' as const;

  constructor(
    readonly template: string,
    readonly path: string,
    problem: string,
  ) {
    super(`Lock name template "${template}" needs ${path}, which ${problem}.`);
  }
}
