import { LockNotHeldError } from '../errors/lock-not-held.error.js';

/**
 * What an acquisition returns: proof of ownership that can release the lock from anywhere.
 *
 * A class (abstract) rather than an interface, so that `@CurrentLock() lock: LockHandle` compiles in
 * a decorated signature under `isolatedModules` + `emitDecoratorMetadata` (the default Nest tsconfig):
 * the emitted metadata refers to a value.
 *
 * Checking before a write: `isHeld`, `signal` and `throwIfLost()` compare the lease's monotonic
 * deadline with the clock at the moment they are read, so a process that resumes after a pause longer
 * than its lease sees the loss before its next write, even if the timer that would have aborted the
 * signal has not run yet. The signal itself aborts from that timer, which runs before I/O callbacks
 * and timers due after the deadline; code resumed from an earlier timer or microtask may run first,
 * which is why a write that must not be stale is fenced with `token` or preceded by `throwIfLost()`.
 */
export abstract class LockHandle {
  abstract readonly name: string;
  /**
   * Fencing token: strictly increasing per lock name across all clients; the same for reentrant
   * acquisitions. Send it with every write the lock protects, and let the resource refuse a token
   * lower than the highest it has seen.
   */
  abstract readonly token: number;
  /** Aborted (reason: LockLostError) when the lock is lost: lease ran out, renewal refused, etc. */
  abstract readonly signal: AbortSignal;
  /** True while the lock is known to be held at this instant: not released, not lost, lease not over. */
  abstract readonly isHeld: boolean;
  /** Releases this acquisition (one hold of a reentrant lock). LockNotHeldError if already released or lost. */
  abstract unlock(): Promise<void>;
  /**
   * Throws unless the lock is known to be held at this instant: LockLostError when it was lost (or
   * its lease is over), LockNotHeldError when this handle released it. Call it right before a write.
   */
  abstract throwIfLost(): void;

  /**
   * `await using lock = await locks.lock('x')` releases at the end of the block (unless released or
   * lost meanwhile: nothing is thrown for that here).
   */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.releaseUnlessOver();
  }

  /**
   * @internal Releases this acquisition at the end of the work it protected, unless it is known to be
   * over: released already, or lost (its signal aborted). Not `if (isHeld) unlock()`: a lease that ran
   * out here while a renewal was on its way reads as not held, and the renewal may yet keep the lock
   * in Redis, renewed by the watchdog with nobody left to release it (a leader that resigned after a
   * pause kept its election for good: simulator seed 47282). A release that finds the lock gone is not
   * an error here.
   */
  async releaseUnlessOver(): Promise<void> {
    if (this.signal.aborted) return;
    try {
      await this.unlock();
    } catch (error) {
      if (!(error instanceof LockNotHeldError)) throw error;
    }
  }
}
