import { setImmediate as realTurn } from 'node:timers/promises';

/** Events at one virtual instant beyond which a run is stopped as a livelock (nothing real runs that many). */
const MAX_EVENTS_AT_ONE_TIME = 100_000;
/** After a pause, a process's I/O that arrived meanwhile is read this long after its timers due meanwhile ran. */
const IO_AFTER_TIMERS_MS = 1e-6;
/** Events in one run beyond which it is stopped (a busy loop that does advance time). */
const MAX_EVENTS = 2_000_000;

/** Who an event belongs to: a process can be paused (its events wait) or killed (its events vanish). */
export interface EventOwner {
  /** Virtual time until which the owner's events wait (paused), or 0. */
  readonly pausedUntil: number;
  readonly dead: boolean;
}

interface SimEvent {
  time: number;
  seq: number;
  readonly owner: EventOwner | undefined;
  /** A reply or a message reaching its process (I/O), not one of its timers. */
  readonly io: boolean;
  readonly fn: () => void;
  cancelled: boolean;
}

/** A handle on a scheduled event. */
export interface Scheduled {
  cancel(): void;
}

/**
 * Virtual time and the one queue of everything that happens in a simulation: timers of the simulated
 * processes, messages on the simulated network, faults. Events run one at a time in (time, order of
 * scheduling); after each, every promise the event settled runs to completion (one real turn of Node's
 * event loop, in which nothing else of the simulation can run), as between two real timers. So the
 * order of everything is decided by the seed alone, never by the machine.
 */
export class Scheduler {
  /** Virtual milliseconds since the start of the simulation. */
  now = 0;
  private seq = 0;
  private readonly heap: SimEvent[] = [];
  /** Events run so far. */
  executed = 0;
  /** Set when a run went on without time moving (see runUntil): what it stopped on. */
  runaway: string | undefined;
  /** Events run at the current virtual time (a livelock runs them without end). */
  private atSameTime = 0;

  at(time: number, fn: () => void, owner?: EventOwner, io = false): Scheduled {
    const event: SimEvent = { time: Math.max(time, this.now), seq: this.seq++, owner, io, fn, cancelled: false };
    this.push(event);
    return {
      cancel: () => {
        event.cancelled = true;
      },
    };
  }

  after(ms: number, fn: () => void, owner?: EventOwner, io = false): Scheduled {
    return this.at(this.now + Math.max(0, ms), fn, owner, io);
  }

  get pending(): number {
    return this.heap.length;
  }

  /**
   * Runs events until virtual time `until` (events due later stay queued) or `stop()` says so. An
   * event of a paused owner moves to the end of its pause, after what was queued before it, its I/O
   * after its timers (Node runs the timers due first, then reads what arrived meanwhile); one of a
   * dead owner is dropped.
   */
  async runUntil(until: number, stop: () => boolean = () => false): Promise<void> {
    while (this.heap.length > 0 && !stop() && this.runaway === undefined) {
      const event = this.heap[0]!;
      if (event.time > until) break;
      this.pop();
      if (event.cancelled) continue;
      const owner = event.owner;
      if (owner?.dead) continue;
      if (owner && owner.pausedUntil > event.time) {
        // The same event, moved (not a copy): a timer cancelled after the pause must stay cancelled,
        // as clearTimeout does for a timer that is due but has not run. A copy ran anyway and its stale
        // callback ended the waiter's next sleep (seed 12153: a wait without deadline that never woke).
        event.time = owner.pausedUntil + (event.io ? IO_AFTER_TIMERS_MS : 0);
        event.seq = this.seq++;
        this.push(event);
        continue;
      }
      if (event.time === this.now) {
        if (++this.atSameTime > MAX_EVENTS_AT_ONE_TIME) {
          this.runaway = `more than ${MAX_EVENTS_AT_ONE_TIME} events at virtual time ${this.now.toFixed(3)}: something loops without waiting`;
          return;
        }
      } else this.atSameTime = 0;
      if (this.executed >= MAX_EVENTS) {
        this.runaway = `more than ${MAX_EVENTS} events by virtual time ${this.now.toFixed(3)}`;
        return;
      }
      this.now = event.time;
      this.executed++;
      event.fn();
      await realTurn();
    }
    if (!stop()) this.now = Math.max(this.now, until);
  }

  private push(event: SimEvent): void {
    const heap = this.heap;
    heap.push(event);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < heap.length && before(heap[left]!, heap[smallest]!)) smallest = left;
      if (right < heap.length && before(heap[right]!, heap[smallest]!)) smallest = right;
      if (smallest === i) return;
      [heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!];
      i = smallest;
    }
  }
}

function before(a: SimEvent, b: SimEvent): boolean {
  return a.time < b.time || (a.time === b.time && a.seq < b.seq);
}
