import type { HeldLock } from '../lock/held-lock.js';

/**
 * Renews every lock held without an explicit leaseTime, all in one batch, every `intervalMs`
 * (watchdog timeout / 3). One timer for the whole process, unref'd so it never keeps the process
 * alive; it runs only while there is something to renew. A round still in flight (Redis slow or
 * unreachable) makes the next tick skip; the expiry timer of each lock then decides whether it is lost.
 */
export class LeaseWatchdog {
  private readonly locks = new Set<HeldLock>();
  private timer: NodeJS.Timeout | undefined;
  private roundInFlight = false;

  constructor(
    private readonly intervalMs: number,
    private readonly renew: (locks: HeldLock[]) => Promise<void>,
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
    if (this.roundInFlight || this.locks.size === 0) return;
    this.roundInFlight = true;
    // `renew` reports its own failures; it never rejects.
    void this.renew([...this.locks]).finally(() => {
      this.roundInFlight = false;
    });
  }
}
