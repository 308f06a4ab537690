import { LockLostError } from '../errors/lock-lost.error.js';
import { LockNotHeldError } from '../errors/lock-not-held.error.js';
import type { HeldLock } from './held-lock.js';

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
}

/** What a handle needs from the engine: release, and the lease check at the moment of reading. */
export interface LockReleaser {
  release(held: HeldLock): Promise<void>;
  /** Whether `held` is still valid now; a lease found over is marked lost on the spot. */
  verify(held: HeldLock): boolean;
}

/** The handle of one acquisition of one lock (a HeldLock, shared by the reentrant holds of its owner). */
export class HeldLockHandle extends LockHandle {
  private released = false;

  constructor(
    private readonly held: HeldLock,
    private readonly releaser: LockReleaser,
  ) {
    super();
  }

  get name(): string {
    return this.held.resource.name;
  }

  get token(): number {
    return this.held.token;
  }

  get signal(): AbortSignal {
    this.releaser.verify(this.held);
    return this.held.signal;
  }

  get isHeld(): boolean {
    return !this.released && this.releaser.verify(this.held);
  }

  throwIfLost(): void {
    if (this.released) throw new LockNotHeldError(this.name, 'this handle has already released it');
    if (this.releaser.verify(this.held)) return;
    throw this.held.lostBecause ?? new LockLostError(this.name, 'lease-expired');
  }

  async unlock(): Promise<void> {
    if (this.released) {
      throw new LockNotHeldError(this.name, 'this handle has already released it');
    }
    this.released = true;
    await this.releaser.release(this.held);
  }

  /** `await using lock = await locks.lock('x')` releases at the end of the block. */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.isHeld) await this.unlock();
  }

  toJSON(): { name: string; token: number; isHeld: boolean } {
    return { name: this.name, token: this.token, isHeld: this.isHeld };
  }
}
