import type { InspectedLockKind, LockCircuitStatus, LockInstanceInfo } from '../core/index.js';
import type { LockStatsRow } from './lock-stats.js';

/** A lock's kind on the board: the inspected kinds, and a leadership (the plain lock `leader:<name>`, its token the term). */
export type BoardLockKind = InspectedLockKind | 'leader';

/** One hold: the holder of an exclusive lock, a writer or a reader, a semaphore's acquisition, a leader. */
export interface BoardHolder {
  readonly role: 'holder' | 'writer' | 'reader' | 'permits' | 'leader';
  /** The process, as inspection labels it (`name@host:pid`). */
  readonly process: string;
  /** The holder is the process serving the page. */
  readonly self: boolean;
  readonly owner: string;
  /** Fencing token (a leader's term). */
  readonly token: number;
  readonly heldForMs: number | undefined;
  readonly leaseLeftMs: number;
  /** `watchdog` (renewed while held), `fixed` (leaseTime), `grant` (granted to a waiting caller, not yet claimed), `unknown`. */
  readonly renewal: 'watchdog' | 'fixed' | 'grant' | 'unknown';
  readonly holds: number;
  /** A semaphore's acquisition: the permits it holds. */
  readonly permits: number | undefined;
}

/** One waiter, in the order it will be served. */
export interface BoardWaiter {
  readonly position: number;
  readonly process: string;
  readonly self: boolean;
  /** Fair lock, semaphore: the queued caller's owner id; plain lock: undefined (the process waits for its callers). */
  readonly owner: string | undefined;
  readonly permits: number | undefined;
  /** Callers of the page's own process behind this entry (a plain lock's mark stands for all of them). */
  readonly callers: number | undefined;
  /**
   * How long it has waited: exact for callers of the page's own process (`timing: 'exact'`); for
   * other processes, since this board first saw it in line (`'seen'`: within one refresh), or at
   * least that long when it was there when the board first looked (`'at-least'`).
   */
  readonly waitedMs: number;
  readonly timing: 'exact' | 'seen' | 'at-least';
}

export interface BoardLock {
  readonly name: string;
  readonly kind: BoardLockKind;
  readonly state: 'held' | 'waiting' | 'free';
  readonly holders: readonly BoardHolder[];
  /** A semaphore's size and the permits in use; undefined for locks. */
  readonly semaphore: { readonly used: number; readonly size: number } | undefined;
  readonly waiters: readonly BoardWaiter[];
  readonly lastToken: number | undefined;
  /** Whether the page offers to force-unlock it (enabled, held, not a semaphore). */
  readonly canForceUnlock: boolean;
}

export interface BoardQuery {
  /** What was typed into the filter ('' for everything). */
  readonly filter: string;
  readonly page: number;
}

/** Everything one refresh of the page shows, also served as JSON (`<path>/data`). */
export interface BoardSnapshot {
  readonly title: string;
  /** Server time of the read (ISO 8601). */
  readonly at: string;
  /** Where the locks live (no credentials) and who reads them. */
  readonly target: string;
  readonly self: string;
  readonly query: BoardQuery;
  /** The SCAN pattern used, or undefined when the filter could not be one (then `error` says why). */
  readonly pattern: string | undefined;
  readonly locks: {
    /** Lock entries matching (a name with two kinds counts twice). */
    readonly total: number;
    /** The scan stopped at scanLimit names: some matching locks are not counted. */
    readonly truncated: boolean;
    readonly page: number;
    readonly pages: number;
    readonly pageSize: number;
    readonly rows: readonly BoardLock[];
  };
  readonly leaders: readonly BoardLock[];
  readonly instances: readonly LockInstanceInfo[];
  /** This process's circuit breaker of each Redis node (empty when turned off, or on a cluster client). */
  readonly circuits: readonly LockCircuitStatus[];
  /** Wait and hold figures of this process, per label, filtered by the same pattern. */
  readonly stats: readonly LockStatsRow[];
  readonly forceUnlock: boolean;
  /** How long the read took, in ms. */
  readonly readMs: number;
  readonly error: string | undefined;
}
