import type { LockBackgroundErrorEvent, LockEvents } from '../events/lock-events.js';
import { settleWithin } from '../util/late-timer.js';
import type { RoundTrips } from './round-trips.js';

/** What the engine does in the background, as reported in `background-error` events. */
export type BackgroundOperation = LockBackgroundErrorEvent['operation'];

/**
 * Best-effort Redis work nobody waits for (giving back a grant, retrying a release, withdrawing a
 * waiting mark): its failures become `background-error` events, never rejections, and close() waits
 * for what is still running before the connections go, up to its deadline (see `settledBy`).
 */
export class BackgroundWork {
  /** The work running now, and what each one is. */
  private readonly running = new Map<Promise<void>, BackgroundOperation>();

  constructor(
    private readonly events: LockEvents,
    private readonly roundTrips: RoundTrips,
  ) {}

  run(operation: BackgroundOperation, name: string | undefined, work: () => Promise<unknown>): void {
    const done: Promise<void> = work()
      .then(
        () => undefined,
        (error: unknown) => this.report(operation, name, error),
      )
      .finally(() => this.running.delete(done));
    this.running.set(done, operation);
  }

  report(operation: BackgroundOperation, name: string | undefined, error: unknown): void {
    this.events.emit('background-error', { operation, ...(name === undefined ? {} : { name }), error: this.roundTrips.cause(error) });
  }

  /**
   * Resolves when the work running now (and what it starts meanwhile) has ended, or at monotonic time
   * `deadline`, whichever comes first: with what was still running then, by operation (empty: all done).
   */
  async settledBy(deadline: number): Promise<Map<BackgroundOperation, number>> {
    while (this.running.size > 0) {
      const left = deadline - this.roundTrips.clock.now();
      if (left <= 0) break;
      const ended = await settleWithin(
        this.roundTrips.clock,
        Promise.all([...this.running.keys()]).then(() => true),
        left,
        () => false,
      );
      if (!ended) break;
    }
    const unfinished = new Map<BackgroundOperation, number>();
    for (const operation of this.running.values()) unfinished.set(operation, (unfinished.get(operation) ?? 0) + 1);
    return unfinished;
  }
}
