import type { Clock } from '../../util/clock.js';
import type { LockRuntime } from '../../engine/lock-runtime.js';
import { CommandNotSentError } from '../../redis/command-not-sent.js';
import { settleWithin } from '../../util/late-timer.js';

const nothing = (): void => undefined;

/** What one command of the order gave: its reply, and when the order may go on past it. */
export interface Ordered<T> {
  readonly reply: Promise<T>;
  /** Settles once the command (and what `then` sent after it) has answered or can no longer run. */
  readonly done: Promise<void>;
}

/**
 * The commands that one owner sends one RedLock master about one lock run there in the order it sent
 * them. Without it a later command can run first: a reply that comes late does not hold the next
 * command back, and a script the master lacks is sent again (EVAL after NOSCRIPT) behind whatever was
 * sent meanwhile. A release that ran before the acquire it was to undo left a hold nobody would
 * release (simulator seed 9287); a late grant handed back after the owner had let go and taken the
 * lock again dropped the new hold (seed 13311).
 *
 * So each command waits until the owner's previous one on that master has answered, or can no longer
 * run (a command that changes a hold is refused once its operation timeout has passed: NOT_AFTER).
 * Commands on nothing pending go at once, in the same turn (group commit still batches them).
 * One order per client, shared by every lock object of the client (`getLock` makes one per use).
 */
export class OwnerOrder {
  private static readonly byClient = new WeakMap<LockRuntime, OwnerOrder>();
  private readonly tails = new Map<string, Promise<void>>();

  private constructor(
    private readonly clock: Clock,
    private readonly boundMs: number,
  ) {}

  /** The order of the client whose runtime is `runtime` (bounded by its clock and operation timeout). */
  static of(runtime: LockRuntime): OwnerOrder {
    let order = OwnerOrder.byClient.get(runtime);
    if (!order) {
      order = new OwnerOrder(runtime.clock, runtime.operationTimeoutMs);
      OwnerOrder.byClient.set(runtime, order);
    }
    return order;
  }

  /**
   * Sends `send` once the previous command of the same `key` (lock, owner, master) is done, unless that
   * is after `sendBy` (then its reply is a CommandNotSentError: not run). `then`, given the reply, sends
   * what must follow it: in the order (`inOrder`), before anything else of that owner there, if the
   * reply came before the command could no longer run; out of it otherwise (what it sends must then be
   * safe in any order). The command is done when that has answered.
   */
  send<T>(key: string, send: () => Promise<T>, then?: (value: T, inOrder: boolean) => Promise<unknown> | undefined, sendBy = Infinity): Ordered<T> {
    const before = this.tails.get(key);
    // Not sent at all once nobody waits for it (`sendBy`): a master slower than the attempts' wait for
    // it piled their acquisitions up here, each sent (and given back) seconds after its attempt had
    // failed, after its caller had given up and after close() (simulator seed 141, a slow link).
    const go = (): Promise<T> =>
      this.clock.now() <= sendBy
        ? send()
        : Promise.reject(new CommandNotSentError("its turn after the same owner's command before it came after its caller had given up"));
    const reply = before ? before.then(go) : send();
    let inOrder = true;
    const answered = (before ?? Promise.resolve()).then(() =>
      settleWithin(
        this.clock,
        reply.then(
          (value) => ({ value }),
          () => undefined,
        ),
        this.boundMs,
        () => {
          inOrder = false;
          return undefined;
        },
      ),
    );
    // A reply that comes after the command could no longer run: what follows it goes out of order
    // (it must not depend on order then: a grant is given back by its token).
    if (then) {
      reply.then((value) => {
        if (!inOrder) void then(value, false)?.then(nothing, nothing);
      }, nothing);
    }
    const done = answered
      .then((answer) => {
        const next = answer && then?.(answer.value, true);
        // What follows is bounded too: the wait for the attempt's outcome, then a command of its own.
        return next ? settleWithin(this.clock, next.then(nothing, nothing), 2 * this.boundMs, nothing) : undefined;
      })
      .then(nothing, nothing);
    this.tails.set(key, done);
    void done.then(() => {
      if (this.tails.get(key) === done) this.tails.delete(key);
    });
    return { reply, done };
  }
}
