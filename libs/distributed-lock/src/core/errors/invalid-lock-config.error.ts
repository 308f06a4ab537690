import { DistributedLockError } from './distributed-lock.error.js';

/** Module or environment configuration is wrong. `setting` names the option or variable. */
export class InvalidLockConfigError extends DistributedLockError {
  readonly code = 'LOCK_INVALID_CONFIG' as const;

  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(`Invalid distributed-lock configuration ${setting}: ${message}`);
  }
}
