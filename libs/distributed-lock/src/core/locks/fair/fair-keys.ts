import type { LockKeys } from '../../scripts/lock-keys.js';

/** The fair lock's key variant: its hash is `<prefix>{name}:fair`, apart from a plain lock's of the same name. */
export const FAIR_VARIANT = ':fair';

/** A fair lock's line: the queue (owner -> arrival ticket) and each entry's deadline, beside its hash. */
export interface FairQueueKeys {
  readonly queue: string;
  readonly deadlines: string;
}

/** The keys of the fair lock's line called `name`, beside its hash `keys.lock(name, FAIR_VARIANT)`. */
export function fairQueueKeys(keys: LockKeys, name: string): FairQueueKeys {
  const hash = keys.lock(name, FAIR_VARIANT);
  return { queue: `${hash}:queue`, deadlines: `${hash}:queue-deadlines` };
}
