import type { ReplicaAck } from '../config/replica-ack.js';
import type { LeaseResource } from '../engine/lease-resource.js';
import type { ChannelMessages } from '../waiting/line-event.js';

/** A successful attempt: valid for `validityMs` from its start (default: the whole lease). */
export type Acquired = { readonly acquired: true; readonly token: number; readonly holds: number; readonly validityMs?: number };
/** One attempt's outcome: granted, or not, with the ms until the lock's state can change. */
export type AttemptResult = Acquired | { readonly acquired: false; readonly ttl: number };

/** What one attempt asks for. */
export interface AttemptArgs {
  readonly owner: string;
  readonly leaseMs: number;
  /** The watchdog renews the hold (no leaseTime); kinds record it in Redis for inspection. */
  readonly watchdog: boolean;
  /** A grant must be confirmed by that many replicas, or be undone (ReplicaAckError). */
  readonly replicaAck: ReplicaAck | undefined;
  /** The caller waits if this attempt fails (a plain lock then marks its process as waiting; a fair lock queues it). */
  readonly willWait: boolean;
  /** The caller is in this process's queue of waiters for the lock. */
  readonly queued: boolean;
}

/**
 * What an acquisition (see Acquisition) needs from a lock kind, beyond the lease operations: the
 * one-round-trip attempt and the waiting traits of the kind. @internal: implemented by the kinds,
 * called by the library; not for application code.
 */
export interface LockKindContract extends LeaseResource {
  attempt(args: AttemptArgs): Promise<AttemptResult>;
  /** Sets `owner`'s holds to `holds` if it is the owner (corrects phantom holds, see Acquisition). */
  adjustHolds(owner: string, holds: number): Promise<void>;
  /**
   * The acquisition ended without the lock and this owner has no other one in flight: drop whatever
   * the attempts left behind for it (a fair lock's queue entry). Best effort. Kinds whose attempts
   * leave nothing per owner (the plain lock's mark is per process, see LockHandover) have none.
   */
  abandon?(owner: string): Promise<void>;
  /** The codec of what the kind's scripts publish on `channel`, where its waiters listen (see LockProtocol.messages). */
  readonly messages: ChannelMessages;
  /** A shared (read) lock: the waiters queued right behind one that takes it are woken together. */
  readonly shared: boolean;
  /**
   * A second grant to the same owner is a second hold (a reentrant lock counts them); false when an
   * owner has one lease whatever it asks (a semaphore's acquisition), so an attempt that finds the
   * owner holding reports that same lease.
   */
  readonly countsHolds: boolean;
  /**
   * Longest a waiter sleeps without asking Redis again, even when no release or lease end is due (a
   * fair lock's waiters must keep their place in the Redis queue alive). Infinity: no such need.
   */
  readonly maxPauseMs: number;
  /**
   * Waiters woken by a release message wait a random while up to this before their attempt (RedLock:
   * two waiters that try the masters at once can split their votes, again and again; see RedLock).
   */
  readonly wakeJitterMs?: number;
}
