import type { Clock } from '../util/clock.js';
import { Handover, type HandoverOutcome } from './handover.js';
import type { ChannelMessages, Grant, LineEvent } from './line-event.js';
import { Waiter, type WaitOutcome } from './waiter.js';

/**
 * Local hand-overs in a row on one lock after which the next one yields to other processes if any of
 * them waits (the lock then goes to the process that has waited longest): processes take turns, each
 * serving up to this many of its callers in a row.
 */
export const MAX_HANDOVER_STREAK = 8;
/** Wake-ups addressed to callers not (yet) in the line, kept until claimed (see JoinOptions.owner); the oldest go first. */
const MAX_UNCLAIMED = 64;

/** Who a release in this process may hand the lock to directly (plain locks without replica acknowledgement). */
export interface HandoverTerms {
  readonly owner: string;
  readonly leaseMs: number;
  /** Its watchdog will renew the lease (recorded in Redis for inspection). */
  readonly watchdog?: boolean;
}

export interface JoinOptions {
  /** Monotonic time at which the caller stops waiting (Infinity: never). */
  readonly deadline: number;
  /** It waits for a shared (read) lock: the callers right behind one that takes it may take it too. */
  readonly shared?: boolean;
  /** The owner id it waits as: a wake-up addressed to it (a semaphore's) wakes it alone. */
  readonly owner?: string;
  /** Set when a release in this process may hand the lock to this caller directly. */
  readonly terms?: HandoverTerms;
}

/**
 * A grant addressed to a caller of this process that is not in the line (it stopped waiting, or has not
 * joined yet): what to do with it (see LockLine.address).
 */
export type GiveBack = (owner: string, grant: Grant) => void;

/** Why a wait for the subscription ended (see LockLine.ready). */
export type ReadyOutcome = 'ready' | 'timeout' | 'aborted' | 'closed';

/** What a line needs from the subscriptions of its process. */
export interface LineSubscription {
  /** Resolves once the line's channel is subscribed (or could not be: timers then do the work), bounded by `deadline` and `signal`. */
  ready(channel: string, deadline: number, signal: AbortSignal | undefined): Promise<ReadyOutcome>;
  /** The line gained its first caller or lost its last: (un)subscribe. */
  changed(channel: string): void;
}

/**
 * A release in this process handing its lock to the line's first caller (LockLine.nextHandover). The
 * releaser settles it with the release's reply, and wakes the caller.
 */
export interface Succession {
  readonly terms: HandoverTerms;
  /** The process's turn is over: if another process waits, the release gives the lock to it instead. */
  readonly yieldToOthers: boolean;
  /** The owner id of the caller of this process waiting after the successor; undefined when none does. */
  readonly next: string | undefined;
  /** The release's outcome; false when the successor stopped waiting meanwhile (a granted lock must then be given back). */
  settle(outcome: HandoverOutcome): boolean;
  /** Wakes the successor: to take the outcome, or to look for itself. */
  wake(): void;
  /** The lock went to another process (a yield): the successor no longer expects it, and sleeps on until told. */
  forget(): void;
}

/**
 * One caller's place in its process's line for one lock: how it sleeps, whether it is first, a
 * hand-over a release of this process is making to it, and a grant addressed to it. Only its line
 * writes its hand-over and its grant.
 */
export class Place {
  readonly waiter: Waiter;
  /** A release in this process is handing the lock to this caller; settled with its reply. */
  handover: Handover | undefined;
  /** A release (in any process) granted this caller what it waits for in Redis, and said so on the channel (see Grant). */
  grant: Grant | undefined;
  /** A wake-up addressed to this caller came before it joined (between its failed attempt and joining): it must look now. */
  addressedEarly = false;
  /** Monotonic time it joined the line (how long it has waited, for inspection). */
  readonly since: number;

  constructor(
    readonly line: LockLine,
    readonly options: JoinOptions,
  ) {
    this.since = line.clock.now();
    this.waiter = new Waiter(options.deadline, line.clock);
  }

  /** First in the line: the one the next release wakes, and the one that watches the holder's lease. */
  get isHead(): boolean {
    return this.line.head === this;
  }

  /** Whether a release is handing the lock to it right now, or has granted it something not taken yet. */
  get beingHandedOver(): boolean {
    return this.handover !== undefined || this.grant !== undefined;
  }

  wait(ms: number, signal: AbortSignal | undefined): Promise<WaitOutcome> {
    return this.waiter.wait(ms, signal);
  }

  ready(signal: AbortSignal | undefined): Promise<ReadyOutcome> {
    return this.line.subscription.ready(this.line.channel, this.options.deadline, signal);
  }

  /** The hand-over a release is making to this caller, taken once: its outcome when the release has its reply. */
  takeHandover(): Promise<HandoverOutcome> | undefined {
    const handover = this.handover;
    this.handover = undefined;
    return handover?.result;
  }

  /** The grant addressed to this caller, taken once. */
  takeGrant(): Grant | undefined {
    const grant = this.grant;
    this.grant = undefined;
    return grant;
  }

  /**
   * Leaves the line; `leaseMs`: the lease of the lock it took (when `acquired`), which the next caller
   * must now watch. Without the lock, a hand-over still under way is declined (if it is not settled yet,
   * the releaser learns it from `settle`). True when something may be held in this caller's name that
   * it will not take, and must be given back: a hand-over settled as granted or uncertain, or a grant.
   */
  leave(acquired: boolean, leaseMs: number): boolean {
    this.line.leave(this, acquired, leaseMs);
    if (acquired) return false;
    const handed = this.handover?.decline();
    return (handed !== undefined && (handed.granted || handed.uncertain === true)) || this.grant !== undefined;
  }
}

/**
 * The callers of this process waiting for one lock (one channel), and the hand-over between them: the
 * one module that owns who waits, in what order, who is woken, and who a release of this process
 * gives the lock to.
 *
 * - A FIFO line. One release wakes one caller here, the first: no thundering herd. Only the first keeps
 *   a timer at the holder's remaining lease (for a holder that dies without releasing); the others
 *   sleep until their turn or their deadline. When the first leaves, the next is promoted: after the
 *   first took the lock, its timer is re-armed to that lease; after it gave up, it is woken to look for
 *   itself (which also passes on a wake-up the first had not consumed, so none is lost).
 * - Hand-over: a release in this process may give the lock straight to the first caller, in the
 *   release's own script (nextHandover). Processes take turns: after MAX_HANDOVER_STREAK hand-overs in
 *   a row, or once the turn has lasted `turnMs` since the acquisition that began it, the release is
 *   asked to yield to other waiting processes.
 * - Messages on the lock's channel, decoded by the lock's kind (LineEvent, from the codec the first
 *   caller joined with): `freed` wakes the first caller; `addressed` wakes the caller it names
 *   wherever it is in the line, with what a release granted it if anything (see address). One addressed
 *   to another process's caller (a plain lock's grant, heard by every waiting process) makes the first
 *   caller here look again once that grant would have expired, in case it is never taken.
 */
export class LockLine {
  private readonly places: Place[] = [];
  /** Local hand-overs in a row (see MAX_HANDOVER_STREAK). */
  private streak = 0;
  /** When the acquisition that began this process's turn was made (monotonic ms). */
  private turnStartedAt = 0;
  /** Owners a wake-up was addressed to before they joined. */
  private readonly unclaimed = new Set<string>();
  private closed = false;

  /** What to do with a grant to a caller of this process that is not in the line; set by the callers that join. */
  private giveBack: GiveBack | undefined;

  constructor(
    readonly channel: string,
    private readonly messages: ChannelMessages,
    readonly subscription: LineSubscription,
    private readonly clientId: string,
    private readonly turnMs: number,
    readonly clock: Clock,
  ) {}

  get size(): number {
    return this.places.length;
  }

  get head(): Place | undefined {
    return this.places[0];
  }

  /** The owner id of the first caller in the line, other than `except`. */
  firstWaiting(except?: string): string | undefined {
    return this.places.find((place) => place.options.owner !== undefined && place.options.owner !== except)?.options.owner;
  }

  /** How long each caller in the line has waited so far, in ms, longest first (for inspection). */
  waitedMs(): number[] {
    const now = this.clock.now();
    return this.places.map((place) => now - place.since).sort((a, b) => b - a);
  }

  /** Queues a caller; the first one subscribes the channel. */
  join(options: JoinOptions, giveBack?: GiveBack): Place {
    if (giveBack) this.giveBack = giveBack;
    const place = new Place(this, options);
    if (options.owner !== undefined) place.addressedEarly = this.unclaimed.delete(options.owner);
    if (this.closed) place.waiter.close();
    this.places.push(place);
    if (this.places.length === 1) this.subscription.changed(this.channel);
    return place;
  }

  /** Removes a caller and promotes the next one if it was the first (see Place.leave). */
  leave(place: Place, acquired: boolean, leaseMs: number): void {
    const index = this.places.indexOf(place);
    if (index >= 0) this.places.splice(index, 1);
    if (acquired && place.options.shared) {
      // A reader that took a read lock: the readers right behind it can share it.
      for (const [position, next] of this.places.entries()) {
        if (!next.options.shared) {
          if (position === 0) next.waiter.rearm(leaseMs);
          break;
        }
        next.waiter.notify();
      }
    } else {
      const next = this.places[0];
      if (next) {
        if (index === 0 && acquired) next.waiter.rearm(leaseMs);
        else if (index === 0 || place.waiter.pending) next.waiter.notify();
      }
    }
    if (this.places.length === 0) this.subscription.changed(this.channel);
  }

  /**
   * A release in this process is about to drop the last hold of this lock: the caller it may hand the
   * lock to, if any. Only the first caller, and only while it sleeps (an attempt of its own in flight
   * would race the hand-over). `holderSince`: when the releasing holder acquired it (for the first
   * hand-over of a turn).
   */
  nextHandover(holderSince: number): Succession | undefined {
    const head = this.places[0];
    if (head?.handover) return undefined;
    if (this.closed || !head?.options.terms || !head.waiter.sleeping) {
      this.streak = 0; // the release frees the lock (or grants it elsewhere): the run ends
      return undefined;
    }
    if (this.streak === 0) this.turnStartedAt = holderSince;
    this.streak += 1;
    const yieldToOthers = this.streak > MAX_HANDOVER_STREAK || this.clock.now() - this.turnStartedAt >= this.turnMs;
    if (yieldToOthers) this.streak = 0;
    const handover = new Handover();
    head.handover = handover;
    return {
      terms: head.options.terms,
      yieldToOthers,
      next: this.firstWaiting(head.options.owner),
      settle: (outcome) => handover.settle(outcome),
      wake: () => head.waiter.notify(),
      forget: () => {
        if (head.handover === handover) head.handover = undefined;
      },
    };
  }

  /** A message on the lock's channel, decoded by the lock's kind (see the class comment). */
  hear(message: string): void {
    this.act(this.messages.decode(message));
  }

  private act(event: LineEvent): void {
    const head = this.places[0];
    if (event.type === 'freed') return head?.waiter.notify();
    if (event.othersLookAfterMs === undefined || event.owner.startsWith(`${this.clientId}:`)) return this.address(event.owner, event.grant);
    head?.waiter.wakeWithin(event.othersLookAfterMs);
  }

  /**
   * A message addressed to one of this process's callers by its owner id: wakes it wherever it is in the
   * line, with what a release granted it (`grant`) if it has no grant already. For a caller not (yet) in
   * the line, kept until it joins, which then makes it look at once (its attempt finds a grant held in
   * its name); and a grant to it is handed to `giveBack` (a plain lock's: given back unless that caller
   * is still acquiring, so that a caller that left does not hold the lock up for the grant's lease).
   */
  private address(owner: string, grant: Grant | undefined): void {
    const place = this.places.find((each) => each.options.owner === owner);
    if (!place) {
      this.unclaimed.add(owner);
      if (this.unclaimed.size > MAX_UNCLAIMED) this.unclaimed.delete(this.unclaimed.values().next().value!);
      if (grant) this.giveBack?.(owner, grant);
      return;
    }
    if (grant && !place.grant && !this.closed) place.grant = grant;
    place.waiter.notify();
  }

  /** Wakes the first caller, or every caller (after a reconnect, or to look again after a failure). */
  wake(all: boolean): void {
    for (const place of all ? this.places : this.places.slice(0, 1)) place.waiter.notify();
  }

  /** Wakes every caller with 'closed'; later callers are closed at once. */
  close(): void {
    this.closed = true;
    for (const place of this.places) place.waiter.close();
  }
}
