import type { LockEvents } from '../events/lock-events.js';
import { monotonicNow } from '../util/clock.js';
import type { SubscriberPort } from './subscriber-port.js';
import { Handover } from './handover.js';
import { Waiter } from './waiter.js';

/**
 * Local hand-overs in a row on one lock after which the next one yields to other processes if any of
 * them waits (the lock then goes to the process that has waited longest): processes take turns, each
 * serving up to this many of its callers in a row.
 */
export const MAX_HANDOVER_STREAK = 8;
/**
 * Lease of a lock granted to a waiting process until one of its callers takes it over (normally
 * within a round trip). A process that died while marked as waiting holds the lock up for this long.
 */
export const GRANT_LEASE_MS = 250;
/**
 * While callers wait, the first waiter of each lock looks again this often, and the subscription is
 * renewed (SUBSCRIBE is idempotent): Redis pub/sub delivers at most once, and a cluster client can
 * lose a sharded subscription in a failover without telling (seen with CLUSTER FAILOVER), after which
 * releases and grants would go unheard until a lease ran out. One attempt per lock per process per
 * interval, only while someone waits.
 */
export const WAITER_RECHECK_MS = 2000;
/** Waiters of other processes look again this long after a grant they were told of, in case it is never taken. */
const GRANT_RECHECK_MS = GRANT_LEASE_MS + 20;
/** Wake-ups addressed to waiters not (yet) in the queue, kept per channel until claimed (see `claim`); the oldest go first. */
const MAX_UNCLAIMED = 64;

interface ChannelState {
  readonly channel: string;
  /** Waiters in arrival order; the head is the one woken by the next release. */
  readonly waiters: Waiter[];
  subscribed: boolean;
  /** Subscribe/unsubscribe operations, one after the other. */
  operations: Promise<void>;
  pendingOperations: number;
  /** Local hand-overs in a row (see MAX_HANDOVER_STREAK). */
  handoverStreak: number;
  /** When the acquisition that began this process's turn was made (monotonic ms). */
  turnStartedAt: number;
  /** What to do with a grant to this process that no waiter is left to take (see `join`). */
  withdraw: (() => void) | undefined;
  /** Owners a `next:<owner>` wake-up was addressed to before they joined the queue (see `claim`). */
  unclaimed: Set<string>;
}

export type ReadyOutcome = 'ready' | 'timeout' | 'aborted' | 'closed';

/**
 * Wakes waiting callers when a lock is released, through Redis pub/sub.
 *
 * - One subscription per lock name per process, however many callers wait for it; it is dropped
 *   when the last waiter leaves.
 * - Local waiters form a FIFO queue. One release wakes one local waiter, the head: no thundering herd.
 * - Only the head watches the holder's lease (a timer at the remaining TTL, for a holder that dies
 *   without releasing); the others sleep until their turn or their deadline, so a long queue does not
 *   poll Redis. When the head leaves, the next waiter is promoted: after the head took the lock, its
 *   timer is re-armed to that lease; after the head gave up, it is woken to look for itself (this also
 *   hands over a wake-up the head had not consumed, so none is lost).
 * - A caller that arrives first subscribes before it retries, so a release between its failed attempt
 *   and the subscription is seen by the retry, and every later one by the subscription. A caller that
 *   queues behind others needs no retry: a release it missed woke the head.
 * - After a reconnect every waiter retries once, since releases may have been missed meanwhile.
 */
export class UnlockNotifier {
  private readonly channels = new Map<string, ChannelState>();
  private closed = false;
  /** Runs `recheck` every WAITER_RECHECK_MS while anyone waits (unref'd). */
  private recheckTimer: NodeJS.Timeout | undefined;
  private resolveClosed!: () => void;
  /** Resolves when the notifier closes: a pending ready() must not wait for a subscription that may never be answered. */
  private readonly whenClosed = new Promise<ReadyOutcome>((resolve) => (this.resolveClosed = () => resolve('closed')));

  /**
   * `clientId`: this process's client, to recognise grants addressed to it (`grant:<client id>`).
   * `turnMs`: how long a run of local hand-overs may last (see LockClientOptions.handoverTurn).
   */
  constructor(
    private readonly port: SubscriberPort,
    private readonly events: LockEvents,
    private readonly clientId = '',
    private readonly turnMs = Infinity,
  ) {
    port.onMessage((channel, message) => this.onMessage(channel, message));
    port.onReconnect(() => this.recover());
  }

  /** The periodic safety net (see WAITER_RECHECK_MS): renew each subscription, then let each first waiter look. */
  private recheck(): void {
    if (this.channels.size === 0 || this.closed) {
      clearInterval(this.recheckTimer);
      this.recheckTimer = undefined;
      return;
    }
    this.resubscribeThenWake((state) => state.waiters.slice(0, 1));
  }

  /**
   * After a reconnect (or, in a cluster, subscriptions moved to new masters), notifications may have
   * been lost: every waiter looks at once, and again once its channel is surely subscribed (the
   * client re-subscribes on its own, but does not say when that is done), so that a release or grant
   * published in between is not missed either.
   */
  private recover(): void {
    this.wakeAll();
    this.resubscribeThenWake((state) => state.waiters);
  }

  /**
   * Renews the subscription of every channel someone waits on (SUBSCRIBE is idempotent), in line with
   * (un)subscriptions, then wakes `whom`. A channel whose subscription failed (made during an outage)
   * is subscribed here too: its waiters would otherwise hear no release until their own timers ran out.
   */
  private resubscribeThenWake(whom: (state: ChannelState) => readonly Waiter[]): void {
    for (const state of this.channels.values()) {
      this.enqueue(state, async () => {
        if (this.closed || state.waiters.length === 0) return;
        await this.port.subscribe(state.channel);
        if (!state.subscribed) {
          state.subscribed = true;
          this.events.emit('subscription', { channel: state.channel, subscribed: true });
        }
        for (const waiter of whom(state)) waiter.notify();
      });
    }
  }

  /**
   * `released`: the lock is free; the first waiter here looks. `grant:<client>`: the lock was granted
   * to a waiting process: if this one, its first waiter takes it over (or, with nobody left waiting,
   * it is passed on); if another, nobody here is woken, but the first waiter looks again once the
   * grant would have expired, in case that process never takes it. `next:<owner>`: it is that
   * waiter's turn (a semaphore's first in line): it looks, wherever it is in this process's queue.
   */
  private onMessage(channel: string, message: string): void {
    const state = this.channels.get(channel);
    if (message.startsWith('next:')) {
      const owner = message.slice(5);
      const waiter = state?.waiters.find((each) => each.owner === owner);
      if (waiter) waiter.notify();
      else if (state) {
        state.unclaimed.add(owner);
        if (state.unclaimed.size > MAX_UNCLAIMED) state.unclaimed.delete(state.unclaimed.values().next().value!);
      }
      return;
    }
    const head = state?.waiters[0];
    if (message.startsWith('grant:')) {
      if (message.slice(6) !== this.clientId) head?.wakeWithin(GRANT_RECHECK_MS);
      else if (head) head.notify();
      else state?.withdraw?.();
      return;
    }
    head?.notify();
  }

  /** Number of channels with waiters or with a pending (un)subscription. */
  get activeChannels(): number {
    return this.channels.size;
  }

  /**
   * Queues a waiter for `channel` that gives up at monotonic time `deadline` (`shared`: a read lock).
   * `withdraw`: how this process withdraws from the lock's waiting processes when a grant to it arrives and nobody here waits any more (its mark goes, the grant is passed on).
   */
  join(channel: string, deadline: number, shared = false, withdraw?: () => void): Waiter {
    let state = this.channels.get(channel);
    if (!state) {
      state = {
        channel,
        waiters: [],
        subscribed: false,
        operations: Promise.resolve(),
        pendingOperations: 0,
        handoverStreak: 0,
        turnStartedAt: 0,
        withdraw: undefined,
        unclaimed: new Set(),
      };
      this.channels.set(channel, state);
    }
    if (withdraw) state.withdraw = withdraw;
    if (!this.recheckTimer && !this.closed) {
      this.recheckTimer = setInterval(() => this.recheck(), WAITER_RECHECK_MS);
      this.recheckTimer.unref();
    }
    const waiter = new Waiter(channel, deadline, shared);
    if (this.closed) waiter.close();
    state.waiters.push(waiter);
    if (state.waiters.length === 1) this.reconcile(state);
    return waiter;
  }

  /**
   * Names the owner `waiter` waits as, so that a wake-up addressed to it (`next:<owner>`) wakes it.
   * True if one arrived before it joined (between its failed attempt and `join`): it must look now.
   */
  claim(waiter: Waiter, owner: string): boolean {
    waiter.owner = owner;
    return this.channels.get(waiter.channel)?.unclaimed.delete(owner) ?? false;
  }

  /**
   * Resolves once the subscription for the waiter's channel is in place (or could not be made: the
   * waiter then relies on its timer), bounded by `deadline` and `signal`.
   */
  async ready(waiter: Waiter, deadline: number, signal: AbortSignal | undefined, now: () => number): Promise<ReadyOutcome> {
    const state = this.channels.get(waiter.channel);
    // `subscribed` is set only once a SUBSCRIBE is confirmed and cleared before an UNSUBSCRIBE is
    // sent, so when it reads true the channel is covered and the caller may retry at once.
    if (!state || state.subscribed) return 'ready';
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    try {
      return await Promise.race<ReadyOutcome>([
        state.operations.then(() => (this.closed ? 'closed' : 'ready')),
        this.whenClosed,
        new Promise<ReadyOutcome>((resolve) => {
          if (Number.isFinite(deadline)) {
            timer = setTimeout(() => resolve('timeout'), Math.max(0, deadline - now()));
            timer.unref();
          }
          if (signal) {
            onAbort = () => resolve('aborted');
            if (signal.aborted) onAbort();
            else signal.addEventListener('abort', onAbort, { once: true });
          }
        }),
      ]);
    } finally {
      if (timer) clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * A release in this process is about to drop the last hold of the lock behind `channel`: the
   * waiter that may receive it directly, if any. Only the head, and only while it sleeps (an attempt
   * of its own in flight would race the hand-over). After MAX_HANDOVER_STREAK hand-overs in a row, or
   * once the turn has lasted `turnMs` since `holderSince` (when the releasing holder acquired it, for
   * the first hand-over of a turn), the release is told to yield to other processes if they wait:
   * processes take turns in count and in time. The chosen waiter gets a Handover that the releaser
   * settles; it keeps sleeping until then. `last`: no other waiter of this process.
   */
  nextHandover(channel: string, holderSince: number): { waiter: Waiter; yieldToOthers: boolean; last: boolean } | undefined {
    const state = this.channels.get(channel);
    if (!state) return undefined;
    const head = state.waiters[0];
    if (head?.handover) return undefined;
    if (this.closed || !head?.handoverTerms || !head.sleeping) {
      state.handoverStreak = 0; // the release frees the lock (or grants it elsewhere): the run ends
      return undefined;
    }
    if (state.handoverStreak === 0) state.turnStartedAt = holderSince;
    state.handoverStreak += 1;
    const yieldToOthers = state.handoverStreak > MAX_HANDOVER_STREAK || monotonicNow() - state.turnStartedAt >= this.turnMs;
    if (yieldToOthers) state.handoverStreak = 0;
    head.handover = new Handover();
    return { waiter: head, yieldToOthers, last: state.waiters.length === 1 };
  }

  /** How many callers of this process wait for a lock right now (read by the waiters gauge). */
  get waiting(): number {
    let count = 0;
    for (const state of this.channels.values()) count += state.waiters.length;
    return count;
  }

  /** How many callers of this process wait for the lock behind `channel`. */
  waiterCount(channel: string): number {
    return this.channels.get(channel)?.waiters.length ?? 0;
  }

  /** How long each caller of this process waiting behind `channel` has waited so far, in ms, longest first (for inspection). */
  waitedMs(channel: string): number[] {
    const now = monotonicNow();
    return (this.channels.get(channel)?.waiters ?? []).map((waiter) => now - waiter.since).sort((a, b) => b - a);
  }

  /** Whether `waiter` is first in its queue: the one the next release wakes, and the one watching the lease. */
  isHead(waiter: Waiter): boolean {
    return this.channels.get(waiter.channel)?.waiters[0] === waiter;
  }

  /**
   * Removes the waiter and promotes the next one if it was the head. `leaseMs`: the lease of the lock
   * it took (when `acquired`), which the next waiter must now watch. A reader that took a read lock
   * wakes the readers queued at the front together: they can all share it.
   */
  leave(waiter: Waiter, acquired: boolean, leaseMs: number): void {
    const state = this.channels.get(waiter.channel);
    if (!state) return;
    const index = state.waiters.indexOf(waiter);
    if (index >= 0) state.waiters.splice(index, 1);
    if (acquired && waiter.shared) {
      for (const [position, next] of state.waiters.entries()) {
        if (!next.shared) {
          if (position === 0) next.rearm(leaseMs);
          break;
        }
        next.notify();
      }
    } else {
      const next = state.waiters[0];
      if (next) {
        if (index === 0 && acquired) next.rearm(leaseMs);
        else if (index === 0 || waiter.pending) next.notify();
      }
    }
    if (state.waiters.length === 0) this.reconcile(state);
  }

  /** Wakes every waiter of every channel (after a reconnect, or to re-check after a failure). */
  wakeAll(): void {
    for (const state of this.channels.values()) {
      for (const waiter of state.waiters) waiter.notify();
    }
  }

  /** Wakes every waiter with 'closed'; later joins are closed at once. Subscriptions die with the connection. */
  close(): void {
    this.closed = true;
    this.resolveClosed();
    clearInterval(this.recheckTimer);
    this.recheckTimer = undefined;
    for (const state of this.channels.values()) {
      for (const waiter of state.waiters) waiter.close();
    }
  }

  /** Brings the subscription in line with whether anyone waits, one operation at a time. */
  private reconcile(state: ChannelState): void {
    this.enqueue(state, async () => {
      const wanted = state.waiters.length > 0 && !this.closed;
      if (wanted === state.subscribed) return;
      if (wanted) {
        await this.port.subscribe(state.channel);
        state.subscribed = true;
      } else {
        state.subscribed = false;
        if (!this.closed) await this.port.unsubscribe(state.channel);
      }
      this.events.emit('subscription', { channel: state.channel, subscribed: state.subscribed });
    });
  }

  /** Runs a (un)subscription step of `state` after the ones already queued. */
  private enqueue(state: ChannelState, step: () => Promise<void>): void {
    state.pendingOperations += 1;
    state.operations = state.operations
      .then(step)
      .catch((error: unknown) => {
        this.events.emit('background-error', {
          operation: state.waiters.length > 0 ? 'subscribe' : 'unsubscribe',
          error: error instanceof Error ? error : new Error(String(error)),
        });
      })
      .finally(() => {
        state.pendingOperations -= 1;
        if (state.pendingOperations === 0 && state.waiters.length === 0 && !state.subscribed) {
          this.channels.delete(state.channel);
        }
      });
  }
}
