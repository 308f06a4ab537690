import type { Invariants } from './invariants.js';
import type { Scheduler } from './scheduler.js';

/** A process as the call bookkeeping sees it. */
export interface CallingProcess {
  readonly name: string;
  readonly dead: boolean;
  readonly clock: { now(): number };
  /** Virtual [from, to) intervals during which it was paused. */
  readonly pauses: readonly (readonly [number, number])[];
}

interface Call {
  readonly process: CallingProcess;
  readonly what: string;
  readonly waitMs: number;
  readonly startedLocal: number;
  readonly startedAt: number;
}

/**
 * Every library call a simulated caller makes, from its start to its answer: what is checked is that
 * an answer comes (`stuck` when the run ends without one, for a live process), and comes in time
 * (`answer-late`: later than `waitTime` plus one operation timeout after the call, on the caller's own
 * clock; a call during which its process was paused is not judged, since a paused process answers
 * nothing).
 */
export class Calls {
  private readonly open = new Set<Call>();
  /**
   * How late an answer may be and still keep the bound: timer granularity. A timer of less than 1 ms
   * fires after 1 ms (Node's setTimeout, and the simulated clocks), and an answer at the bound can
   * wait for two of them (an operation deadline re-armed for the last fraction of a millisecond, then
   * the clean-up's own bound).
   */
  private static readonly SLACK_MS = 2.5;

  constructor(
    private readonly scheduler: Scheduler,
    private readonly invariants: Invariants,
    private readonly operationTimeoutMs: number,
  ) {}

  begin(process: CallingProcess, what: string, waitMs: number): Call {
    const call: Call = { process, what, waitMs, startedLocal: process.clock.now(), startedAt: this.scheduler.now };
    this.open.add(call);
    return call;
  }

  end(call: Call, outcome: string): void {
    this.open.delete(call);
    if (!Number.isFinite(call.waitMs)) return;
    const tookMs = call.process.clock.now() - call.startedLocal;
    const bound = call.waitMs + this.operationTimeoutMs + Calls.SLACK_MS;
    if (tookMs > bound && !this.pausedDuring(call)) {
      this.invariants.violate(
        'answer-late',
        `${call.process.name}'s ${call.what} (waitTime ${call.waitMs} ms) answered ${outcome} after ${tookMs.toFixed(3)} ms, beyond waitTime + operationTimeout (${bound - Calls.SLACK_MS} ms)`,
      );
    }
  }

  /** Calls of live processes still without an answer. */
  unanswered(): string[] {
    return [...this.open]
      .filter((call) => !call.process.dead)
      .map((call) => `${call.process.name}'s ${call.what}, started at ${call.startedAt.toFixed(3)} (waitTime ${call.waitMs} ms)`);
  }

  private pausedDuring(call: Call): boolean {
    return call.process.pauses.some(([from, to]) => from < this.scheduler.now && to > call.startedAt);
  }
}
