import type { SubscriberPort } from '../connection/subscriber-port.js';
import type { LockEvents } from '../events/lock-events.js';
import type { Clock } from '../util/clock.js';
import type { ChannelMessages } from './line-event.js';
import { LockLine, type GiveBack, type JoinOptions, type Place, type Succession } from './lock-line.js';
import { Subscriptions } from './subscriptions.js';

/**
 * This process's lock lines, one per lock (channel) someone here waits for, and the messages that
 * reach them through pub/sub (see LockLine for what each one means, and Subscriptions for when the
 * channels are subscribed). Acquisitions join a line; releases ask it for a successor.
 */
export class LockLines {
  private readonly lines = new Map<string, LockLine>();
  private readonly subscriptions: Subscriptions;
  private closed = false;

  /**
   * `clientId`: this process's client, to recognise grants addressed to it.
   * `turnMs`: how long a run of local hand-overs may last (see LockClientOptions.handoverTurn).
   */
  constructor(
    port: SubscriberPort,
    events: LockEvents,
    private readonly clock: Clock,
    private readonly clientId = '',
    private readonly turnMs = Infinity,
  ) {
    this.subscriptions = new Subscriptions(port, events, clock, {
      wanted: (channel) => (this.lines.get(channel)?.size ?? 0) > 0,
      wake: (channel, all) => this.lines.get(channel)?.wake(all),
      idle: (channel) => {
        if (this.lines.get(channel)?.size === 0) this.lines.delete(channel);
      },
    });
    port.onMessage((channel, message) => this.lines.get(channel)?.hear(message));
  }

  /**
   * Queues a caller in the line of `channel`. `messages`: the decoder of the messages the lock's kind
   * publishes there (the line's first caller brings it; a channel belongs to one kind). `giveBack`: what
   * this process does with a grant to one of its callers that is not in the line (see LockLine.giveBack).
   */
  join(channel: string, messages: ChannelMessages, options: JoinOptions, giveBack?: GiveBack): Place {
    let line = this.lines.get(channel);
    if (!line) {
      line = new LockLine(channel, messages, this.subscriptions, this.clientId, this.turnMs, this.clock);
      if (this.closed) line.close();
      this.lines.set(channel, line);
    }
    return line.join(options, giveBack);
  }

  /** How many callers of this process wait for the lock behind `channel`. */
  count(channel: string): number {
    return this.lines.get(channel)?.size ?? 0;
  }

  /** The owner id of the first caller of this process waiting behind `channel`, other than `except`. */
  firstWaiting(channel: string, except?: string): string | undefined {
    return this.lines.get(channel)?.firstWaiting(except);
  }

  /** How long each caller of this process waiting behind `channel` has waited so far, in ms, longest first (for inspection). */
  waitedMs(channel: string): number[] {
    return this.lines.get(channel)?.waitedMs() ?? [];
  }

  /** The caller a release in this process may hand the lock to (see LockLine.nextHandover). */
  nextHandover(channel: string, holderSince: number): Succession | undefined {
    return this.lines.get(channel)?.nextHandover(holderSince);
  }

  /** How many callers of this process wait for a lock right now (read by the waiters gauge). */
  get waiting(): number {
    let count = 0;
    for (const line of this.lines.values()) count += line.size;
    return count;
  }

  /** Channels subscribed, or with a (un)subscription under way. */
  get activeChannels(): number {
    return this.subscriptions.size;
  }

  /** Wakes every caller of every line (a command connection is back: attempts that failed look again). */
  wakeAll(): void {
    for (const line of this.lines.values()) line.wake(true);
  }

  /** Wakes every caller with 'closed'; later callers are closed at once. Subscriptions die with the connection. */
  close(): void {
    this.closed = true;
    this.subscriptions.close();
    for (const line of this.lines.values()) line.close();
  }
}
