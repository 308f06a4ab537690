import type { SubscriberPort } from '../connection/subscriber-port.js';
import type { LockEvents } from '../events/lock-events.js';
import { every, type CancelTimer, type Clock } from '../util/clock.js';
import type { LineSubscription, ReadyOutcome } from './lock-line.js';

/**
 * While callers wait, the first caller of each lock looks again this often, and the subscription is
 * renewed (SUBSCRIBE is idempotent): Redis pub/sub delivers at most once, and a cluster client can
 * lose a sharded subscription in a failover without telling (seen with CLUSTER FAILOVER), after which
 * releases and grants would go unheard until a lease ran out. One attempt per lock per process per
 * interval, only while someone waits.
 */
export const WAITER_RECHECK_MS = 2000;

interface ChannelSubscription {
  subscribed: boolean;
  /** Subscribe/unsubscribe operations, one after the other. */
  operations: Promise<void>;
  pending: number;
}

/** What the subscriptions need to know of the lines. */
export interface SubscribedLines {
  /** Whether anyone in this process waits on `channel`. */
  wanted(channel: string): boolean;
  /** Wakes the first caller of `channel` (`all`: every caller), to look again. */
  wake(channel: string, all: boolean): void;
  /** `channel` is unsubscribed with nothing pending: its line may go if it is empty. */
  idle(channel: string): void;
}

/**
 * The subscriptions of this process to lock channels: one per channel while anyone here waits on it,
 * made before the first caller retries (so no release between its failed attempt and the subscription
 * is missed) and dropped when the last caller leaves, one operation at a time per channel (a leave and
 * a join in the same turn coalesce). The safety nets of at-most-once pub/sub live here too: the periodic
 * re-check (WAITER_RECHECK_MS), and the recovery after a reconnect, when every caller looks at once and
 * again once its channel is surely subscribed (the client re-subscribes on its own, but does not say
 * when that is done), so that a release published in between is not missed either.
 */
export class Subscriptions implements LineSubscription {
  private readonly channels = new Map<string, ChannelSubscription>();
  private recheckTimer: CancelTimer | undefined;
  private closed = false;
  private resolveClosed!: () => void;
  /** Resolves when closed: a pending ready() must not wait for a subscription that may never be answered. */
  private readonly whenClosed = new Promise<ReadyOutcome>((resolve) => (this.resolveClosed = () => resolve('closed')));

  constructor(
    private readonly port: SubscriberPort,
    private readonly events: LockEvents,
    private readonly clock: Clock,
    private readonly lines: SubscribedLines,
  ) {
    port.onReconnect(() => this.recover());
  }

  /** Channels subscribed, or with a (un)subscription under way. */
  get size(): number {
    return this.channels.size;
  }

  /** Brings the channel's subscription in line with whether anyone waits, one operation at a time. */
  changed(channel: string): void {
    if (!this.recheckTimer && !this.closed && this.lines.wanted(channel)) {
      this.recheckTimer = every(this.clock, WAITER_RECHECK_MS, () => this.recheck());
    }
    this.enqueue(channel, async (state) => {
      const wanted = this.lines.wanted(channel) && !this.closed;
      if (wanted === state.subscribed) return;
      if (wanted) {
        await this.port.subscribe(channel);
        state.subscribed = true;
      } else {
        state.subscribed = false;
        if (!this.closed) await this.port.unsubscribe(channel);
      }
      this.events.emit('subscription', { channel, subscribed: state.subscribed });
    });
  }

  /**
   * Resolves once `channel` is subscribed (or could not be: the caller then relies on its timer),
   * bounded by `deadline` (monotonic) and `signal`.
   */
  async ready(channel: string, deadline: number, signal: AbortSignal | undefined): Promise<ReadyOutcome> {
    const state = this.channels.get(channel);
    // `subscribed` is set only once a SUBSCRIBE is confirmed and cleared before an UNSUBSCRIBE is
    // sent, so when it reads true the channel is covered and the caller may retry at once.
    if (!state || state.subscribed) return 'ready';
    let timer: CancelTimer | undefined;
    let onAbort: (() => void) | undefined;
    try {
      return await Promise.race<ReadyOutcome>([
        state.operations.then(() => (this.closed ? 'closed' : 'ready')),
        this.whenClosed,
        new Promise<ReadyOutcome>((resolve) => {
          if (Number.isFinite(deadline)) timer = this.clock.setTimer(deadline - this.clock.now(), () => resolve('timeout'));
          if (signal) {
            onAbort = () => resolve('aborted');
            if (signal.aborted) onAbort();
            else signal.addEventListener('abort', onAbort, { once: true });
          }
        }),
      ]);
    } finally {
      timer?.();
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
  }

  close(): void {
    this.closed = true;
    this.resolveClosed();
    this.recheckTimer?.();
    this.recheckTimer = undefined;
  }

  /** The periodic safety net (see WAITER_RECHECK_MS): renew each subscription, then let each first caller look. */
  private recheck(): void {
    if (this.channels.size === 0 || this.closed) {
      this.recheckTimer?.();
      this.recheckTimer = undefined;
      return;
    }
    this.resubscribeThenWake(false);
  }

  /** After a reconnect (or, in a cluster, subscriptions moved to new masters): every caller looks now, and once re-subscribed. */
  private recover(): void {
    for (const channel of this.channels.keys()) this.lines.wake(channel, true);
    this.resubscribeThenWake(true);
  }

  /**
   * Renews the subscription of every channel someone waits on (SUBSCRIBE is idempotent), in line with
   * (un)subscriptions, then wakes the first caller (`all`: every caller). A channel whose subscription
   * failed (made during an outage) is subscribed here too: its callers would otherwise hear no release
   * until their own timers ran out.
   */
  private resubscribeThenWake(all: boolean): void {
    for (const channel of this.channels.keys()) {
      this.enqueue(channel, async (state) => {
        if (this.closed || !this.lines.wanted(channel)) return;
        await this.port.subscribe(channel);
        if (!state.subscribed) {
          state.subscribed = true;
          this.events.emit('subscription', { channel, subscribed: true });
        }
        this.lines.wake(channel, all);
      });
    }
  }

  /** Runs a (un)subscription step of `channel` after the ones already queued. */
  private enqueue(channel: string, step: (state: ChannelSubscription) => Promise<void>): void {
    let state = this.channels.get(channel);
    if (!state) {
      state = { subscribed: false, operations: Promise.resolve(), pending: 0 };
      this.channels.set(channel, state);
    }
    const current = state;
    current.pending += 1;
    current.operations = current.operations
      .then(() => step(current))
      .catch((error: unknown) => {
        this.events.emit('background-error', {
          operation: this.lines.wanted(channel) ? 'subscribe' : 'unsubscribe',
          error: error instanceof Error ? error : new Error(String(error)),
        });
      })
      .finally(() => {
        current.pending -= 1;
        if (current.pending === 0 && !current.subscribed && !this.lines.wanted(channel)) {
          this.channels.delete(channel);
          this.lines.idle(channel);
        }
      });
  }
}
