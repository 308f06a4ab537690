import { LockHandle } from '../context/lock-handle.js';
import { LockLostError } from '../errors/lock-lost.error.js';
import { LockNotHeldError } from '../errors/lock-not-held.error.js';
import type { HeldLock } from './held-locks.js';

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

  toJSON(): { name: string; token: number; isHeld: boolean } {
    return { name: this.name, token: this.token, isHeld: this.isHeld };
  }
}
