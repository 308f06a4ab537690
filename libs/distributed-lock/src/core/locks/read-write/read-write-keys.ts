import type { LockKeys } from '../../scripts/lock-keys.js';

/** The read-write lock's key variant: its hash is `<prefix>{name}:rw`. */
export const READ_WRITE_VARIANT = ':rw';

/** A read-write lock's live readers (owner -> lease end), beside its hash `keys.lock(name, READ_WRITE_VARIANT)`. */
export function readersKey(keys: LockKeys, name: string): string {
  return `${keys.lock(name, READ_WRITE_VARIANT)}:readers`;
}
