/**
 * What the benchmark needs from a lock library: open a session (its own connections), acquire a
 * lock by name and get back a function that releases it, close. Every library, peer or ours, is
 * one `LockAdapter` in the list in `index.ts`; adding a lock kind is adding an entry there.
 */
export type ScenarioName = 'serial' | 'parallel' | 'contended' | 'semaphore';
export const SCENARIOS: readonly ScenarioName[] = ['serial', 'parallel', 'contended'];
/**
 * The semaphore rows' scenarios: serial and parallel cycles (one permit of a new semaphore each time),
 * and the contended semaphore (several processes on one semaphore; a permit per section).
 */
export const SEMAPHORE_SCENARIOS: readonly ScenarioName[] = ['serial', 'parallel', 'semaphore'];
/** Size of every semaphore the semaphore rows take permits of. */
export const SEMAPHORE_PERMITS = 3;

/** Every library is given the same lease, so nobody gets a cheaper "no expiry" path. */
export const LEASE_MS = 10_000;

export interface RedisTarget {
  host: string;
  port: number;
}

export type Release = () => Promise<unknown>;

export interface LockSession {
  /** Resolves once the lock is held (waiting as long as it takes); the result releases it. */
  acquire(key: string): Promise<Release>;
  close(): Promise<void>;
}

export interface LockAdapter {
  /** Stable id used on the command line (`--only`) and in the JSON. */
  readonly id: string;
  /** Row label in tables and charts. */
  readonly label: string;
  /** npm package the row measures ('' for the hand-written baseline). */
  readonly packageName: string;
  /** Settings the run uses, as written into the results (defaults kept unless noted). */
  readonly settings: Record<string, string | number | boolean>;
  /** Scenarios the row takes part in (a shared read lock has no place in the counter test). */
  readonly scenarios: readonly ScenarioName[];
  /** A family row (fair, read-write, multi) of our library rather than a peer. */
  readonly family?: boolean;
  /** An experiment (a non-default setting of ours): run only when named in --only. */
  readonly experiment?: boolean;
  /**
   * A semaphore row (ours or a peer's): `acquire(key)` takes one permit of a semaphore of
   * SEMAPHORE_PERMITS called `key`. Compared with the other semaphore rows, never with the locks.
   */
  readonly primitive?: 'semaphore';
  open(target: RedisTarget): Promise<LockSession>;
}

/** The library cannot be run here (missing export, engine mismatch...): the row says why. */
export class CouldNotRun extends Error {}
