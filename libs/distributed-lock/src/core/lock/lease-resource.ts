import type { LockKind } from '../events/lock-events.js';

/** What the lease machinery (watchdog, expiry, release) needs from a lock kind. */
export interface LeaseResource {
  readonly name: string;
  readonly kind: LockKind;
  /** Unique among all locks of the client: the lock's key for a plain lock. */
  readonly id: string;
  /** Lengthens the lease if `owner` still holds the lock; false when it does not. */
  renew(owner: string, leaseMs: number): Promise<boolean>;
  /** Drops one hold (or all); -1 when `owner` does not hold it, else the holds left. */
  release(owner: string, all: boolean): Promise<number>;
}
