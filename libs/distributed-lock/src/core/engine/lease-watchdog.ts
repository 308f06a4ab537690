import type { HeldLock } from './held-lock.js';

/**
 * Renews every lock held without an explicit leaseTime, every `intervalMs` (watchdog timeout / 3).
 * One timer for the whole process, unref'd so it never keeps the process alive; it runs only while
 * there is something to renew. Each lock is renewed on its own: a renewal still in flight (its node
 * slow or failing over) makes the next tick skip that lock only, so locks on healthy nodes keep
 * their leases; the expiry deadline of each lock decides whether it is lost.
 */
export class LeaseWatchdog {
  private readonly locks = new Set<HeldLock>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly intervalMs: number,
    /** Renews one lock; reports its own failures, never rejects. */
    private readonly renew: (held: HeldLock) => Promise<void>,
  ) {}

  get size(): number {
    return this.locks.size;
  }

  add(lock: HeldLock): void {
    this.locks.add(lock);
    if (!this.timer) {
      this.timer = setInterval(() => this.tick(), this.intervalMs);
      this.timer.unref();
    }
  }

  delete(lock: HeldLock): void {
    this.locks.delete(lock);
    if (this.locks.size === 0) this.stop();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private tick(): void {
    for (const lock of this.locks) {
      if (lock.renewingSince === undefined) void this.renew(lock);
    }
  }
}
