import { CommandNotSentError } from '../redis/command-not-sent.js';
import type { CancelTimer, Clock } from '../util/clock.js';
import { settleWithin } from '../util/late-timer.js';

/** `closed`: calls are sent; `open`: refused at once; `half-open`: refused while one probe asks the node. */
export type CircuitState = 'closed' | 'open' | 'half-open';

/** When a node's circuit opens, and how long it stays open before a probe (resolved options). */
export interface CircuitBreakerSettings {
  /** Failures in a row (no reply within the operation timeout, the connection down) that open it. */
  readonly failures: number;
  /** Time from opening (or from a failed probe) to the next probe, in ms. */
  readonly resetAfterMs: number;
}

/** A change of state, as the `circuit` event tells it (without the node, which the caller adds). */
export interface CircuitChange {
  readonly state: CircuitState;
  /** Failures in a row when it opened (what opened it: `error`). */
  readonly failures: number;
  /** The failure that opened it, or the probe's that kept it open. */
  readonly error?: Error;
}

/**
 * A circuit breaker for one node: after `failures` calls in a row without a reply (a timeout, the
 * connection down; an error reply from the server is a reply), it opens, and calls are refused at once
 * (CommandNotSentError: not sent, so not run) instead of each waiting out the operation timeout. After
 * `resetAfterMs` it goes half-open and sends one probe (`probe`: a PING, bounded by the operation
 * timeout); calls are still refused meanwhile, so a node that comes back is not hit by every waiter at
 * once. The probe's reply closes the circuit; its failure opens it for another `resetAfterMs`. A reply
 * to any call that was sent (one sent before it opened, or one sent through it, see LockNode) closes it
 * too: the node answers.
 *
 * "In a row" is in the order calls were sent (`sent()` gives each a ticket): a failure of a call sent
 * before one that got a reply says nothing new (calls queued while a connection was down, timing out
 * after it came back), so it is not counted.
 *
 * Time is the client's Clock; the only timer is the next probe's, and `stop()` cancels it.
 */
export class CircuitBreaker {
  private current: CircuitState = 'closed';
  private failuresInRow = 0;
  /** When the next probe starts (monotonic ms), while open. */
  private probeAt = 0;
  /** Wall-clock time of the last change, for what people read (the board, health). */
  private changedAtWall: number;
  private cancelProbe: CancelTimer | undefined;
  /** Counts probes, so that the reply of an older one does not decide for a newer state. */
  private probeSeq = 0;
  /** Tickets of calls sent (see `sent`), and the latest one that got a reply. */
  private lastTicket = 0;
  private lastAnsweredTicket = 0;
  private stopped = false;

  constructor(
    private readonly settings: CircuitBreakerSettings,
    private readonly clock: Clock,
    /** Where, for the refusal's message. */
    private readonly node: string,
    /** Asks the node once (a PING); the probe's reply closes the circuit. */
    private readonly probe: () => Promise<unknown>,
    /** How long a probe may wait for its reply (the operation timeout). */
    private readonly probeTimeoutMs: number,
    private readonly changed: (change: CircuitChange) => void,
  ) {
    this.changedAtWall = clock.wallNow();
  }

  get state(): CircuitState {
    return this.current;
  }

  /** Failures in a row so far (0 after any reply). */
  get failures(): number {
    return this.failuresInRow;
  }

  /** Wall-clock ms of the last change of state (or of the start). */
  get since(): number {
    return this.changedAtWall;
  }

  /** Whether a call may be sent now. */
  get admits(): boolean {
    return this.current === 'closed';
  }

  /** The error of a call refused now: not sent, with when the next probe is due. */
  refusal(what: string): CommandNotSentError {
    const retryAfterMs = this.current === 'open' ? Math.max(0, this.probeAt - this.clock.now()) : 0;
    return new CommandNotSentError(`${what}: the circuit breaker of ${this.node} is ${this.current}`, undefined, { node: this.node, retryAfterMs });
  }

  /** A call is being sent: its ticket, for `succeeded` and `failed`. */
  sent(): number {
    return ++this.lastTicket;
  }

  /** The call of `ticket` got a reply (an error reply included): the node answers. */
  succeeded(ticket: number): void {
    if (this.stopped) return;
    this.lastAnsweredTicket = Math.max(this.lastAnsweredTicket, ticket);
    this.failuresInRow = 0;
    if (this.current !== 'closed') this.close();
  }

  /** The call of `ticket` got no reply in time, or its connection failed: `calls` failures (a batch carries several calls). */
  failed(ticket: number, error: Error, calls = 1): void {
    if (this.stopped || this.current !== 'closed') return; // open: the probe decides
    if (ticket < this.lastAnsweredTicket) return; // sent before a call that got a reply
    this.failuresInRow += calls;
    if (this.failuresInRow >= this.settings.failures) this.open(error);
  }

  /**
   * Probes now if open (not waiting for `resetAfterMs`): the connection says it is ready again (a
   * reconnection), so the node is likely back. Half-open (a probe under way) or closed: nothing to do.
   */
  probeNow(): void {
    if (this.stopped || this.current !== 'open') return;
    this.cancelProbe?.();
    this.sendProbe();
  }

  /** Stops probing (the client is closing): no timer left, no event after this. */
  stop(): void {
    this.stopped = true;
    this.cancelProbe?.();
    this.cancelProbe = undefined;
  }

  private open(error: Error): void {
    this.transition('open', error);
    this.probeAt = this.clock.now() + this.settings.resetAfterMs;
    this.cancelProbe = this.clock.setTimer(this.settings.resetAfterMs, () => this.sendProbe());
  }

  private close(): void {
    this.cancelProbe?.();
    this.cancelProbe = undefined;
    this.transition('closed');
  }

  private sendProbe(): void {
    this.cancelProbe = undefined;
    if (this.stopped || this.current !== 'open') return;
    this.transition('half-open');
    const seq = ++this.probeSeq;
    const ticket = this.sent();
    const timeoutMs = this.probeTimeoutMs;
    let reply: Promise<unknown>;
    try {
      reply = this.probe();
    } catch (error) {
      reply = Promise.reject(error);
    }
    settleWithin(this.clock, reply, timeoutMs, () => {
      throw new Error(`the probe got no reply within ${timeoutMs} ms`);
    }).then(
      () => {
        if (seq === this.probeSeq && this.current === 'half-open') this.succeeded(ticket);
      },
      (error: unknown) => {
        if (this.stopped || seq !== this.probeSeq || this.current !== 'half-open') return;
        this.open(error instanceof Error ? error : new Error(String(error)));
      },
    );
  }

  private transition(state: CircuitState, error?: Error): void {
    this.current = state;
    this.changedAtWall = this.clock.wallNow();
    if (this.stopped) return;
    this.changed(error ? { state, failures: this.failuresInRow, error } : { state, failures: this.failuresInRow });
  }
}
