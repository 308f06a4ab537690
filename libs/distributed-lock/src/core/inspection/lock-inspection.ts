/**
 * What lock inspection reports (`inspect`, `list`, the command-line inspector): a snapshot of one
 * lock as Redis keeps it, read by one script (so holder, waiters and readers belong to one instant),
 * with readable names for the processes involved.
 */

/** The kinds as they live in Redis: a read-write lock is one lock with a writer and readers. */
export type InspectedLockKind = 'reentrant' | 'fair' | 'read-write' | 'semaphore';

/** A process (a lock client) that holds or waits for a lock. */
export interface LockInstanceInfo {
  /** The client's random id: the first part of every owner id it writes. */
  readonly clientId: string;
  readonly host: string | undefined;
  readonly pid: number | undefined;
  /** The client's `instanceName` option (or DISTRIBUTED_LOCK_INSTANCE_NAME). */
  readonly instanceName: string | undefined;
  /**
   * `name@host:pid`, `host:pid`, or, for a client that has not registered (it never took a lock, its
   * registration expired after a minute without a refresh, or it runs a version without inspection),
   * the first characters of its id.
   */
  readonly label: string;
  /** The client doing the inspection. */
  readonly self: boolean;
}

/** One holder: of an exclusive lock, the writer, or one reader of a read-write lock, or one acquisition of a semaphore's permits. */
export interface LockHolderInfo {
  /** The owner id (`<client id>:<lock context>`): anyone who can read the lock's keys can see it. */
  readonly owner: string;
  readonly instance: LockInstanceInfo;
  /** Reentrant holds (1 for a first acquisition; always 1 for a semaphore's acquisition). */
  readonly holds: number;
  /** A semaphore's acquisition: the permits it holds. Undefined for locks. */
  readonly permits: number | undefined;
  /** The fencing token of this hold. */
  readonly token: number;
  /**
   * Milliseconds since the hold began, by the Redis server's clock: tokens are never below the
   * server's time in ms x 1000 when drawn, so `token / 1000` is when it was granted. Undefined when
   * the token runs ahead of the clock (over a thousand tokens a millisecond).
   */
  readonly heldForMs: number | undefined;
  readonly remainingLeaseMs: number;
  /** Whether the holder's watchdog renews the lease; undefined when the holder did not say (an older version). */
  readonly watchdog: boolean | undefined;
  /**
   * A plain lock a release granted to a waiting caller (of the process that waited longest), which that
   * caller holds from the grant's message on and has not claimed with its own lease yet (normally
   * within a round trip; if it never does, the grant's 500 ms lease ends it).
   */
  readonly grant: boolean;
}

/** One waiter, in the order it will be served. */
export interface LockWaiterInfo {
  /** 1 for the next to be served. */
  readonly position: number;
  readonly instance: LockInstanceInfo;
  /**
   * Fair lock: the queued caller's owner id. Plain lock: the first waiting caller of the process, the
   * one a grant to that process goes to (processes are queued, a waiting mark per process, and each
   * process queues its own callers). Undefined when a mark names nobody (written by an older version).
   */
  readonly owner: string | undefined;
  /** Fair lock, semaphore: ms until the waiter's place expires unless it refreshes it (it does while alive). */
  readonly expiresInMs: number | undefined;
  /** Semaphore: the permits the waiter asks for. Undefined for locks. */
  readonly permits: number | undefined;
}

/** A semaphore's size and use, as Redis counts them now. */
export interface SemaphoreInfo {
  /** The semaphore's size, in permits (see `setSize`). */
  readonly size: number;
  /** Permits held by live leases. */
  readonly used: number;
  /** Permits free now: size - used, never below 0 (a size lowered below what is held). */
  readonly available: number;
}

export interface LockInspection {
  readonly name: string;
  readonly kind: InspectedLockKind;
  /** Someone holds it (the writer or any reader, for a read-write lock; any permit, for a semaphore). */
  readonly locked: boolean;
  /** The holder of an exclusive lock, or the writer of a read-write lock. */
  readonly holder: LockHolderInfo | undefined;
  /** The readers of a read-write lock (empty for other kinds). */
  readonly readers: readonly LockHolderInfo[];
  /** A semaphore's acquisitions holding permits, oldest lease end first (empty for other kinds). */
  readonly permitHolders: readonly LockHolderInfo[];
  /** A semaphore's size and use; undefined for locks, and for a semaphore never used. */
  readonly semaphore: SemaphoreInfo | undefined;
  /** Until the lock's keys expire (the longest lease of its holders), in ms; -2 when nothing is held. */
  readonly remainingLeaseMs: number;
  /** Waiting processes (plain lock) or callers (fair lock, semaphore), first to be served first. */
  readonly waiting: readonly LockWaiterInfo[];
  /** Callers of the inspecting process waiting for this lock right now. */
  readonly waitingHere: number;
  /**
   * How long each of those callers has waited so far, in ms, longest first (one entry per caller
   * counted in `waitingHere`, timed from when it queued in this process after its first attempt found
   * the lock taken). Other processes' callers are not timed here: Redis keeps their order, not when
   * they arrived.
   */
  readonly waitingHereForMs: readonly number[];
  /** The last fencing token drawn for the name; undefined if it was never locked (or Redis lost it). */
  readonly lastToken: number | undefined;
}

/** A lock name found by `listNames`, with the kinds of lock kept under it (usually one). */
export interface LockNameInfo {
  readonly name: string;
  readonly kinds: readonly InspectedLockKind[];
}

/** What `listNames` found: names sorted, and whether the scan stopped at the limit. */
export interface LockNameList {
  readonly names: readonly LockNameInfo[];
  /** True when more names match than `limit`: the scan stopped early (which ones are missing is arbitrary). */
  readonly truncated: boolean;
}

/** Options of `listNames`. */
export interface ListLockNamesOptions {
  /** The most names to return (default 1,000, at most 100,000): SCAN stops once that many are found. */
  limit?: number;
}

/** Options of `list`. */
export interface ListLocksOptions {
  /** The most locks to return (default 100, at most 10,000): SCAN stops once that many are found. */
  limit?: number;
}
