import type { Socket } from 'node:net';

/** The faults currently applied to a link, read by every pipe each time it moves data. */
export interface LinkConditions {
  /** Added one-way delay per chunk, in milliseconds. */
  readonly latencyMs: number;
  /** 'hold': nothing is delivered, data waits; 'drop': data arriving now is discarded. */
  readonly blackhole: 'off' | 'hold' | 'drop';
}

interface Pending {
  /** `null` stands for the end of the stream (the sender's FIN), so it keeps its place behind data. */
  readonly chunk: Buffer | null;
  dueAt: number;
}

/**
 * One direction of a proxied connection: bytes read from `source` are written to `target` in the
 * order they were read, each no earlier than its arrival time plus the latency in force when it
 * arrived. A FIFO with one timer (for its head) rather than a timer per chunk, because independent
 * timers of different lengths would reorder the stream when the latency changes.
 */
export class FaultPipe {
  private readonly queue: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private forwarded = 0;
  private dropped = 0;

  constructor(
    private readonly source: Socket,
    private readonly target: Socket,
    private readonly conditions: () => LinkConditions,
  ) {
    source.on('data', (chunk: Buffer) => this.push(chunk));
    source.on('end', () => this.push(null));
    // Back-pressure: stop reading while the receiver's buffer is full, as TCP's window would.
    target.on('drain', () => source.resume());
  }

  /** Bytes written to the target so far. */
  get bytesForwarded(): number {
    return this.forwarded;
  }

  /** Bytes discarded by a dropping black-hole. */
  get bytesDropped(): number {
    return this.dropped;
  }

  /** Bytes read but not yet delivered (delayed or held). */
  get bytesQueued(): number {
    return this.queue.reduce((sum, pending) => sum + (pending.chunk?.length ?? 0), 0);
  }

  /**
   * Delivers whatever may go now and arms the timer for the rest. Called on every arrival and
   * whenever the conditions change; `flush` makes everything already queued due at once (heal).
   */
  pump(flush = false): void {
    if (this.closed) return;
    if (flush) for (const pending of this.queue) pending.dueAt = 0;
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.conditions().blackhole !== 'off') return;
    while (this.queue.length > 0) {
      // Timers may fire up to a millisecond early (libuv rounds its clock), so compare with the
      // real clock and wait again if needed: the added delay is a lower bound tests can rely on.
      const wait = this.queue[0]!.dueAt - performance.now();
      if (wait > 0) {
        this.timer = setTimeout(() => this.pump(), Math.ceil(wait));
        // The sockets keep the process alive while they are open; the timer alone must not.
        this.timer.unref();
        return;
      }
      this.deliver(this.queue.shift()!);
    }
  }

  /** Stops the pipe for good: the queue is discarded and no timer is left behind. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.queue.length = 0;
  }

  private push(chunk: Buffer | null): void {
    if (this.closed) return;
    const { latencyMs, blackhole } = this.conditions();
    // An end of stream is held even when dropping, so a closed connection still closes after heal.
    if (chunk !== null && blackhole === 'drop') {
      this.dropped += chunk.length;
      return;
    }
    this.queue.push({ chunk, dueAt: performance.now() + latencyMs });
    // With no latency, no fault and nothing queued ahead, this forwards within the same tick; an
    // armed timer already waits for the head, which this chunk must not overtake.
    if (this.timer === undefined) this.pump();
  }

  private deliver({ chunk }: Pending): void {
    if (this.target.destroyed || !this.target.writable) return;
    if (chunk === null) {
      this.target.end();
      return;
    }
    this.forwarded += chunk.length;
    if (!this.target.write(chunk)) this.source.pause();
  }
}
