import type { Clock, LockHandle } from '../core/index.js';
import { afterTimeout } from '../core/internal.js';

/**
 * The locks of decorated calls kept for `lockAtLeastFor` after their call ended (a job that ran
 * quickly still keeps the other instances out until then, as ShedLock's option does): each released
 * by an unref'd timer of the client's clock, or all at once on shutdown.
 */
export class DeferredReleases {
  /** Handle -> cancels its timer. */
  private readonly pending = new Map<LockHandle, () => void>();

  constructor(
    private readonly clock: Clock,
    /** Releases a lock; never throws. */
    private readonly unlock: (handle: LockHandle) => Promise<void>,
  ) {}

  /** Releases `handle` in `ms`. */
  defer(handle: LockHandle, ms: number): void {
    const cancel = afterTimeout(this.clock, ms, () => {
      this.pending.delete(handle);
      void this.unlock(handle);
    });
    this.pending.set(handle, cancel);
  }

  /** Shutdown: cancels every timer and releases every lock kept now. */
  async releaseAll(): Promise<void> {
    const pending = [...this.pending.entries()];
    this.pending.clear();
    await Promise.all(
      pending.map(([handle, cancel]) => {
        cancel();
        return this.unlock(handle);
      }),
    );
  }
}
