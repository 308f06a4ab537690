import type { LockBackgroundErrorEvent, LockEvents } from '../events/lock-events.js';
import type { RoundTrips } from './round-trips.js';

/** What the engine does in the background, as reported in `background-error` events. */
export type BackgroundOperation = LockBackgroundErrorEvent['operation'];

/**
 * Best-effort Redis work nobody waits for (giving back a grant, retrying a release, withdrawing a
 * waiting mark): its failures become `background-error` events, never rejections, and close() waits
 * for what is still running before the connections go.
 */
export class BackgroundWork {
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly events: LockEvents,
    private readonly roundTrips: RoundTrips,
  ) {}

  run(operation: BackgroundOperation, name: string, work: () => Promise<unknown>): void {
    const done: Promise<void> = work()
      .then(
        () => undefined,
        (error: unknown) => this.report(operation, name, error),
      )
      .finally(() => this.running.delete(done));
    this.running.add(done);
  }

  report(operation: BackgroundOperation, name: string | undefined, error: unknown): void {
    this.events.emit('background-error', { operation, ...(name === undefined ? {} : { name }), error: this.roundTrips.cause(error) });
  }

  /** Resolves when the work running now has ended. */
  async settled(): Promise<void> {
    await Promise.all([...this.running]);
  }
}
