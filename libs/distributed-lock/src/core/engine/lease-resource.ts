import type { ReplicaAck } from '../config/replica-ack.js';
import type { LockKind } from '../events/lock-events.js';
import type { ReleaseReply } from '../scripts/lock-script.js';

/**
 * Outcome of one renewal: renewed for `validityMs` from its start; or not renewed, either because the
 * lock is gone (`lost`) or because the renewal could not be confirmed (replicas, quorum), in which case
 * the previous deadline stands.
 */
export type RenewResult = { renewed: true; validityMs: number } | { renewed: false; lost: boolean };

/** What a hand-over came to (see LockHandover.releaseTo). */
export type HandoverReply =
  | { readonly outcome: 'not-owner' }
  /** The owner holds more than this hold (and `all` was not set): one hold dropped, nothing handed over. */
  | { readonly outcome: 'held'; readonly remaining: number }
  /** The successor holds it now, with a new fencing token and its own lease. */
  | { readonly outcome: 'handed-over'; readonly token: number }
  /** Asked to yield, the release found another process waiting and granted the lock to the one that has waited longest. */
  | { readonly outcome: 'yielded' };

/** What a hand-over needs: who releases, who takes over and for how long, and whether to yield. */
export interface HandoverArgs {
  /** The releasing owner; its last hold goes. */
  readonly owner: string;
  /** The waiter of this process that takes the lock over. */
  readonly successor: string;
  readonly leaseMs: number;
  /** The successor's watchdog renews its lease (recorded for inspection). */
  readonly successorWatchdog: boolean;
  /** The turn of this process is over: if another process waits, the lock goes to it instead. */
  readonly yieldToOthers: boolean;
  /** The caller of this process waiting after the successor, named in the process's waiting mark; undefined when none does (the mark goes). */
  readonly nextWaiter: string | undefined;
  /**
   * Every hold of the owner goes, not one: the releasing owner knows of no other hold (see
   * ReleaseProtocol.release), so one Redis counts beyond that is a phantom (a late grant) and must go.
   */
  readonly all: boolean;
}

/**
 * The capability of kinds whose releases give the lock straight to a waiter of the same process,
 * and whose waiting processes take turns through marks in Redis (the plain lock). Kinds without it
 * (fair, read-write, RedLock) free the lock and let waiters race, or keep their own queue.
 */
export interface LockHandover {
  /** Drops the owner's last hold and gives the lock to the successor in one step. */
  releaseTo(args: HandoverArgs): Promise<HandoverReply>;
  /** This process no longer waits for the lock, `owner` the last to stop: its waiting mark goes, and a grant to `owner` not yet claimed is passed on. */
  withdraw(owner: string): Promise<void>;
  /** Gives back, in the background, the grant with `token` to `owner`, a caller of this process that is not waiting for it (see ReentrantLock). */
  giveBackGrant(owner: string, token: number): void;
}

/** What the lease machinery (keeper, release protocol, registry) needs from a lock kind. */
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
   * Drops one hold of `owner` (or all). With `expectedHolds`, only if the lock has exactly that many
   * holds: for retries. With `token`, only in the lifetime of the lock that token names (kinds that keep
   * one holder check it: a release Redis runs late then changes nothing).
   */
  release(owner: string, all: boolean, expectedHolds?: number, token?: number): Promise<ReleaseReply>;
  /** Present on kinds that hand the lock over (see LockHandover). */
  readonly handover?: LockHandover;
}
