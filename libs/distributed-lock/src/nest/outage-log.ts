import type { LoggerService } from '@nestjs/common';
import type { LockEventMap, LockEvents } from '../core/index.js';
import type { Clock } from '../core/index.js';

/** The untyped view of LockEvents used to put one listener on events of different payloads. */
interface EventTarget {
  on(event: string, listener: (payload?: { outcome?: string }) => void): unknown;
  off(event: string, listener: (payload?: { outcome?: string }) => void): unknown;
}

/** The events that show Redis answering lock operations again. */
const ANSWERS: readonly (keyof LockEventMap)[] = ['acquired', 'released', 'renewed', 'failed'];

/**
 * Logs a Redis outage (or any run of failing lock operations) once when it starts and once when it
 * ends, with what failed in between counted by kind, instead of a line (or a stack trace) per failure:
 * a job that runs every second, the watchdog, background releases and reconnects would otherwise each
 * log every attempt for as long as Redis is away.
 *
 * It ends at the first sign that Redis answers again: a lock acquired, released, renewed or found busy,
 * or a command connection ready again. It listens for those only during an outage, so the lock path
 * pays nothing for it otherwise.
 */
export class OutageLog {
  private since: number | undefined;
  private readonly counts = new Map<string, number>();
  private readonly onAnswer = (event?: { outcome?: string }): void => {
    // A failed acquisition is an answer only when Redis said "busy" (a timeout), not when Redis failed.
    if (event?.outcome === undefined || event.outcome === 'timeout') this.recovered();
  };

  constructor(
    private readonly logger: LoggerService,
    private readonly events: LockEvents,
    private readonly clock: Clock,
  ) {}

  /** Whether an outage is going on. */
  get active(): boolean {
    return this.since !== undefined;
  }

  /**
   * `what` failed (e.g. `background release`; counted by it), on lock `name` if any: logged if it starts
   * an outage, else counted.
   */
  failed(what: string, error: Error, name?: string): void {
    if (this.since === undefined) {
      this.since = this.clock.now();
      this.logger.warn(
        `Redis lock operations are failing: ${what}${name ? ` of lock "${name}"` : ''}: ${error.message}. Locked calls fail closed meanwhile; ` +
          'further failures are counted and reported once Redis answers again.',
      );
      for (const event of ANSWERS) (this.events as unknown as EventTarget).on(event, this.onAnswer);
    }
    this.counts.set(what, (this.counts.get(what) ?? 0) + 1);
  }

  /** Redis answers again: logs what failed meanwhile, once, and stops listening. */
  recovered(): void {
    if (this.since === undefined) return;
    for (const event of ANSWERS) (this.events as unknown as EventTarget).off(event, this.onAnswer);
    const seconds = ((this.clock.now() - this.since) / 1000).toFixed(1);
    const failures = [...this.counts].map(([what, count]) => `${count} x ${what}`).join('; ');
    this.since = undefined;
    this.counts.clear();
    this.logger.log(`Redis answers lock operations again after ${seconds} s. Meanwhile: ${failures}.`);
  }
}
