import type { Clock } from '../util/clock.js';
import { Handover, type HandoverOutcome } from './handover.js';
import { Waiter, type WaitOutcome } from './waiter.js';

/**
 * Local hand-overs in a row on one lock after which the next one yields to other processes if any of
 * them waits (the lock then goes to the process that has waited longest): processes take turns, each
 * serving up to this many of its callers in a row.
 */
export const MAX_HANDOVER_STREAK = 8;
/**
 * Lease of a lock granted to a waiting process until one of its callers takes it over (normally
 * within a round trip). A process that died while marked as waiting holds the lock up for this long.
 * A Lua argument of the releases that grant (see the plain lock's scripts).
 */
export const GRANT_LEASE_MS = 250;
/** Waiters of other processes look again this long after a grant they were told of, in case it is never taken. */
const GRANT_RECHECK_MS = GRANT_LEASE_MS + 20;
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
  /** The owner id it waits as: a wake-up addressed to it (`next:<owner>`, a semaphore's) wakes it alone. */
  readonly owner?: string;
  /** Set when a release in this process may hand the lock to this caller directly. */
  readonly terms?: HandoverTerms;
}

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
  /** No other caller of this process waits after the successor. */
  readonly last: boolean;
  /** The release's outcome; false when the successor stopped waiting meanwhile (a granted lock must then be given back). */
  settle(outcome: HandoverOutcome): boolean;
  /** Wakes the successor: to take the outcome, or to look for itself. */
  wake(): void;
  /** The lock went to another process (a yield): the successor no longer expects it, and sleeps on until told. */
  forget(): void;
}

/**
 * One caller's place in its process's line for one lock: how it sleeps, whether it is first, and a
 * hand-over a release of this process is making to it. Only its line writes its hand-over.
 */
export class Place {
  readonly waiter: Waiter;
  /** A release in this process is handing the lock to this caller; settled with its reply. */
  handover: Handover | undefined;
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

  /** Whether a release of this process is handing the lock to it right now. */
  get beingHandedOver(): boolean {
    return this.handover !== undefined;
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

  /**
   * Leaves the line; `leaseMs`: the lease of the lock it took (when `acquired`), which the next caller
   * must now watch. Without the lock, a hand-over still under way is declined: its outcome if it is
   * already settled (a granted, or possibly granted, lock must then be given back), else the releaser
   * learns it from `settle`.
   */
  leave(acquired: boolean, leaseMs: number): HandoverOutcome | undefined {
    this.line.leave(this, acquired, leaseMs);
    return acquired ? undefined : this.handover?.decline();
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
 * - Messages on the lock's channel: `released` wakes the first caller; `grant:<client>` (the lock was
 *   granted to a waiting process) wakes this process's first caller when it is for this process, or,
 *   with nobody left here, calls `withdraw` to pass it on; for another process, the first caller looks
 *   again once that grant would have expired, in case it is never taken; `next:<owner>` (a semaphore's
 *   request larger than its size) wakes that caller wherever it is in the line, or is kept until it
 *   joins; `granted:<owner>:<token>:<lease end>` (permits a semaphore's release granted to that
 *   caller) hands them to it (see address).
 */
export class LockLine {
  private readonly places: Place[] = [];
  /** Local hand-overs in a row (see MAX_HANDOVER_STREAK). */
  private streak = 0;
  /** When the acquisition that began this process's turn was made (monotonic ms). */
  private turnStartedAt = 0;
  /** Owners a `next:<owner>` wake-up was addressed to before they joined. */
  private readonly unclaimed = new Set<string>();
  private closed = false;

  /**
   * `withdraw`: how this process withdraws from the lock's waiting processes when a grant to it arrives
   * and nobody here waits any more (its mark goes, the grant is passed on); set by the callers that join.
   */
  withdraw: (() => void) | undefined;

  constructor(
    readonly channel: string,
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

  /** How long each caller in the line has waited so far, in ms, longest first (for inspection). */
  waitedMs(): number[] {
    const now = this.clock.now();
    return this.places.map((place) => now - place.since).sort((a, b) => b - a);
  }

  /** Queues a caller; the first one subscribes the channel. */
  join(options: JoinOptions, withdraw?: () => void): Place {
    if (withdraw) this.withdraw = withdraw;
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
      last: this.places.length === 1,
      settle: (outcome) => handover.settle(outcome),
      wake: () => head.waiter.notify(),
      forget: () => {
        if (head.handover === handover) head.handover = undefined;
      },
    };
  }

  /** A message on the lock's channel (see the class comment). */
  hear(message: string): void {
    if (message.startsWith('next:')) {
      this.address(message.slice(5), undefined);
      return;
    }
    if (message.startsWith('granted:')) {
      // granted:<owner>:<token>:<lease end>; owner ids contain ':', so the numbers are read from the end.
      const body = message.slice(8);
      const end = body.lastIndexOf(':');
      const tokenAt = body.lastIndexOf(':', end - 1);
      const token = Number(body.slice(tokenAt + 1, end));
      const expiresAtServerMs = Number(body.slice(end + 1));
      const valid = tokenAt > 0 && Number.isSafeInteger(token) && Number.isFinite(expiresAtServerMs);
      this.address(body.slice(0, tokenAt), valid ? { token, expiresAtServerMs } : undefined);
      return;
    }
    const head = this.places[0];
    if (message.startsWith('grant:')) {
      if (message.slice(6) !== this.clientId) head?.waiter.wakeWithin(GRANT_RECHECK_MS);
      else if (head) head.waiter.notify();
      else this.withdraw?.();
      return;
    }
    head?.waiter.notify();
  }

  /**
   * A message addressed to one caller by its owner id (a semaphore's, on this process's own channel, so
   * always to one of its callers): wakes it wherever it is in the line, handing it the permits a release
   * granted it (`grant`) if it has no hand-over already; for a caller not (yet) in the line, kept until
   * it joins, which then makes it look at once (its attempt finds a grant held in its name).
   */
  private address(owner: string, grant: { token: number; expiresAtServerMs: number } | undefined): void {
    const place = this.places.find((each) => each.options.owner === owner);
    if (!place) {
      this.unclaimed.add(owner);
      if (this.unclaimed.size > MAX_UNCLAIMED) this.unclaimed.delete(this.unclaimed.values().next().value!);
      return;
    }
    if (grant && !place.handover && !this.closed) {
      const handover = new Handover();
      handover.settle({ granted: true, token: grant.token, grant: { expiresAtServerMs: grant.expiresAtServerMs } });
      place.handover = handover;
    }
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
