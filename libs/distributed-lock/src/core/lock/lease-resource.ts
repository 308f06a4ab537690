import type { ReplicaAck } from '../config/replica-ack.js';
import type { LockKind } from '../events/lock-events.js';

/**
 * Outcome of one renewal: renewed for `validityMs` from its start; or not renewed, either because the
 * lock is gone (`lost`) or because the renewal could not be confirmed (replicas, quorum), in which case
 * the previous deadline stands.
 */
export type RenewResult = { renewed: true; validityMs: number } | { renewed: false; lost: boolean };

/** What the lease machinery (watchdog, expiry, release) needs from a lock kind. */
export interface LeaseResource {
  readonly name: string;
  readonly kind: LockKind;
  /** Unique among all locks of the client: the lock's key for a plain lock. */
  readonly id: string;
  /** Lengthens the lease if `owner` still holds the lock. */
  renew(owner: string, leaseMs: number, replicaAck: ReplicaAck | undefined): Promise<RenewResult>;
  /**
   * Drops one hold (or all); -1 when `owner` does not hold it, else the holds left. With
   * `expectedHolds`, only if the lock has exactly that many holds (-2 otherwise): for retries.
   */
  release(owner: string, all: boolean, expectedHolds?: number): Promise<number>;
}
