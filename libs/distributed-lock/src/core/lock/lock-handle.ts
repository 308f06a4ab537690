import { LockNotHeldError } from '../errors/lock-not-held.error.js';
import type { HeldLock } from './held-lock.js';

/** What an acquisition returns: proof of ownership that can release the lock from anywhere. */
export interface LockHandle {
  readonly name: string;
  /**
   * Fencing token: strictly increasing per lock name across all clients; the same for reentrant
   * acquisitions. Send it with every write the lock protects, and let the resource refuse a token
   * lower than the highest it has seen.
   */
  readonly token: number;
  /** Aborted (reason: LockLostError) when the lock is lost: lease ran out, renewal refused, etc. */
  readonly signal: AbortSignal;
  /** False once released through this handle, or lost. */
  readonly isHeld: boolean;
  /** Releases this acquisition (one hold of a reentrant lock). LockNotHeldError if already released or lost. */
  unlock(): Promise<void>;
}

/** Releases a held lock; implemented by the client's engine. */
export interface LockReleaser {
  release(held: HeldLock): Promise<void>;
}

export class AcquiredLock implements LockHandle {
  private released = false;

  constructor(
    private readonly held: HeldLock,
    private readonly releaser: LockReleaser,
  ) {}

  get name(): string {
    return this.held.resource.name;
  }

  get token(): number {
    return this.held.token;
  }

  get signal(): AbortSignal {
    return this.held.signal;
  }

  get isHeld(): boolean {
    return !this.released && this.held.active;
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
