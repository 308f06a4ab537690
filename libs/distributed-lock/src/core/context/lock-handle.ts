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
   * `await using lock = await locks.lock('x')` releases at the end of the block (when still held; a
   * lock lost meanwhile is not released twice, and nothing is thrown for it here).
   */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.isHeld) await this.unlock();
  }
}
