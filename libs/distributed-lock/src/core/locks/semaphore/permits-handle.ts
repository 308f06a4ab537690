import { LockHandle } from '../../context/lock-handle.js';
import { type HeldLockHandle } from '../../engine/held-lock-handle.js';

/**
 * What one acquisition of a semaphore's permits returns: its own lease, fencing token and lost-lease
 * signal, exactly as a lock's handle (it is one, for `@CurrentLock()` and `currentLock()`), plus how
 * many permits it holds. `release()` (or `unlock()`) gives them all back, from anywhere.
 */
export class PermitsHandle extends LockHandle {
  /** @internal Made by Semaphore. */
  constructor(
    private readonly handle: HeldLockHandle,
    /** How many permits this acquisition holds. */
    readonly permits: number,
  ) {
    super();
  }

  get name(): string {
    return this.handle.name;
  }

  /** Fencing token of this acquisition: every acquisition draws a new one from the name's counter. */
  get token(): number {
    return this.handle.token;
  }

  get signal(): AbortSignal {
    return this.handle.signal;
  }

  get isHeld(): boolean {
    return this.handle.isHeld;
  }

  throwIfLost(): void {
    this.handle.throwIfLost();
  }

  unlock(): Promise<void> {
    return this.handle.unlock();
  }

  /** Gives the permits back (the same as `unlock()`). LockNotHeldError if already given back or lost. */
  release(): Promise<void> {
    return this.handle.unlock();
  }

  toJSON(): { name: string; token: number; permits: number; isHeld: boolean } {
    return { name: this.name, token: this.token, permits: this.permits, isHeld: this.isHeld };
  }
}
