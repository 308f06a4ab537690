import type { LockBackgroundErrorEvent, LockEvents } from '../events/lock-events.js';
import { settleWithin } from '../util/late-timer.js';
import type { RoundTrips } from './round-trips.js';

/** What the engine does in the background, as reported in `background-error` events. */
export type BackgroundOperation = LockBackgroundErrorEvent['operation'];

/**
 * Best-effort Redis work nobody waits for (giving back a grant, retrying a release, withdrawing a
 * waiting mark): its failures become `background-error` events, never rejections, and close() waits
 * for what is still running before the connections go, up to its deadline (see `settledBy`); so it
 * does for the acquisitions in flight (see `acquisitionStarted`).
 */
export class BackgroundWork {
  /** The work running now, and what each one is. */
  private readonly running = new Map<Promise<void>, BackgroundOperation>();
  /** Acquisitions in flight, and who waits for there to be none. */
  private acquisitions = 0;
  private idle: (() => void)[] = [];

  constructor(
    private readonly events: LockEvents,
    private readonly roundTrips: RoundTrips,
  ) {}

  /** Runs `work` in the background; the promise returned settles when it has ended (never rejects). */
  run(operation: BackgroundOperation, name: string | undefined, work: () => Promise<unknown>): Promise<void> {
    const done: Promise<void> = work()
      .then(
        () => undefined,
        (error: unknown) => this.report(operation, name, error),
      )
      .finally(() => this.running.delete(done));
    this.running.set(done, operation);
    return done;
  }

  /**
   * An acquisition starts; `acquisitionEnded` once it has ended, its clean-up included. close() waits
   * for it too: a reply that comes after close() began gives back what it granted (LockEngine.register),
   * and that give-back must be on its way before the connections go (a rolling deploy's process left
   * a lock behind for its lease: found by the simulator).
   */
  acquisitionStarted(): void {
    this.acquisitions += 1;
  }

  acquisitionEnded(): void {
    if (--this.acquisitions > 0) return;
    const idle = this.idle;
    this.idle = [];
    for (const resolve of idle) resolve();
  }

  report(operation: BackgroundOperation, name: string | undefined, error: unknown): void {
    this.events.emit('background-error', { operation, ...(name === undefined ? {} : { name }), error: this.roundTrips.cause(error) });
  }

  /**
   * Resolves when the work running now (and what it starts meanwhile) and the acquisitions in flight have ended, or at monotonic time
   * `deadline`, whichever comes first: with what was still running then, by operation (empty: all done).
   */
  async settledBy(deadline: number): Promise<Map<BackgroundOperation | 'acquire', number>> {
    while (this.running.size > 0 || this.acquisitions > 0) {
      const left = deadline - this.roundTrips.clock.now();
      if (left <= 0) break;
      const acquisitions = this.acquisitions > 0 ? new Promise<void>((resolve) => this.idle.push(resolve)) : undefined;
      const ended = await settleWithin(
        this.roundTrips.clock,
        Promise.all([...this.running.keys(), acquisitions]).then(() => true),
        left,
        () => false,
      );
      if (!ended) break;
    }
    const unfinished = new Map<BackgroundOperation | 'acquire', number>();
    for (const operation of this.running.values()) unfinished.set(operation, (unfinished.get(operation) ?? 0) + 1);
    if (this.acquisitions > 0) unfinished.set('acquire', this.acquisitions);
    return unfinished;
  }
}
