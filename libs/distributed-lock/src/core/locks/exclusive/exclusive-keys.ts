/** The keys of an exclusive (plain or fair) lock, in the order every script that frees one takes them. */
export interface ExclusiveKeys {
  /** The lock hash `{owner, holds, token}` (plus waiting marks for the plain lock). */
  readonly lock: string;
  /** The fencing-token counter. */
  readonly fence: string;
  /** The channel releases publish on. */
  readonly channel: string;
}

/** Who acts, for scripts that check the owner. */
export interface OwnerArgs {
  readonly owner: string;
}

/** The fields of the lock hash that say who holds it, and how many times: read with HMGET. */
export const OWNER_FIELDS: readonly string[] = ['owner', 'holds'];
