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
  /** The channel its releases publish on (and its waiters queue on in this process). */
  readonly channel: string;
  /** Lengthens the lease if `owner` still holds the lock. */
  renew(owner: string, leaseMs: number, replicaAck: ReplicaAck | undefined): Promise<RenewResult>;
  /**
   * Drops one hold (or all); -1 when `owner` does not hold it, else the holds left. With
   * `expectedHolds`, only if the lock has exactly that many holds (-2 otherwise): for retries.
   */
  release(owner: string, all: boolean, expectedHolds?: number): Promise<number>;
  /**
   * Whether this kind hands the lock over between holders (plain locks): within a process in the
   * release itself (`handOver`), and between processes in turns, marking waiting processes in Redis.
   */
  readonly handsOver: boolean;
  /**
   * Kinds that hand over (`handsOver`): drops `owner`'s last hold and grants the lock to `successor`
   * for `leaseMs` in one step. [-1, 0]: not the owner; [holds left, 0]: not the last hold; [0, token]:
   * handed over; [0, -1]: `yieldToOthers` was asked and another process waits, so the lock was
   * granted to the process that has waited longest instead. `successorIsLast`: no other caller of
   * this process waits after the successor.
   */
  handOver?(owner: string, successor: string, leaseMs: number, yieldToOthers: boolean, successorIsLast: boolean): Promise<[number, number]>;
}
