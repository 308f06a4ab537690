import { LockEvents } from '../events/lock-events.js';
import type { SubscriberPort } from '../connection/subscriber-port.js';
import { EXCLUSIVE_MESSAGES, GRANT_LEASE_MS } from '../locks/exclusive/exclusive.messages.js';
import { SEMAPHORE_GRANT_LEASE_MS, SEMAPHORE_MESSAGES } from '../locks/semaphore/semaphore.messages.js';
import type { ChannelMessages } from './line-event.js';
import { MAX_HANDOVER_STREAK } from './lock-line.js';
import { LockLines } from './lock-lines.js';
import { systemClock } from '../util/clock.js';

/**
 * The lines' local bookkeeping (who is woken, what is handed over, when to (un)subscribe), with
 * a scripted subscription port. Lock semantics themselves are tested against Redis in test/lock.
 */
class ScriptedPort implements SubscriberPort {
  readonly calls: string[] = [];
  private message: ((channel: string, message: string) => void) | undefined;
  private reconnect: (() => void) | undefined;
  /** Pending (un)subscribe operations, resolved by the test. */
  readonly pending: (() => void)[] = [];

  /** The next subscribe fails (the connection is down). */
  failNextSubscribe = false;

  subscribe(channel: string): Promise<unknown> {
    this.calls.push(`subscribe ${channel}`);
    if (this.failNextSubscribe) {
      this.failNextSubscribe = false;
      return Promise.reject(new Error('Connection is closed.'));
    }
    return new Promise((resolve) => this.pending.push(() => resolve(1)));
  }
  unsubscribe(channel: string): Promise<unknown> {
    this.calls.push(`unsubscribe ${channel}`);
    return new Promise((resolve) => this.pending.push(() => resolve(0)));
  }
  onMessage(listener: (channel: string, message: string) => void): void {
    this.message = listener;
  }
  onReconnect(listener: () => void): void {
    this.reconnect = listener;
  }
  publish(channel: string, message = 'released'): void {
    this.message?.(channel, message);
  }
  reconnected(): void {
    this.reconnect?.();
  }
  /** Completes every (un)subscription, including those queued while completing earlier ones. */
  async settle(): Promise<void> {
    for (;;) {
      await new Promise((resolve) => setImmediate(resolve));
      const next = this.pending.shift();
      if (!next) return;
      next();
    }
  }
}

const now = (): number => performance.now();

/** The lines here hear a semaphore's addressed messages (on the waiter's process's channel), decoded by its codec. */
const MESSAGES: ChannelMessages = SEMAPHORE_MESSAGES;

describe('LockLines', () => {
  let port: ScriptedPort;
  let notifier: LockLines;

  beforeEach(() => {
    port = new ScriptedPort();
    notifier = new LockLines(port, new LockEvents(), systemClock, 'me');
  });

  it('subscribes once per channel however many wait, and unsubscribes after the last leaves', async () => {
    const a = notifier.join('c', MESSAGES, { deadline: Infinity });
    const b = notifier.join('c', MESSAGES, { deadline: Infinity });
    await port.settle();
    expect(await a.ready(undefined)).toBe('ready');
    expect(await b.ready(undefined)).toBe('ready');
    a.leave(true, 30_000);
    b.leave(false, 30_000);
    await port.settle();
    expect(port.calls).toEqual(['subscribe c', 'unsubscribe c']);
    expect(notifier.activeChannels).toBe(0);
  });

  it('a subscription that failed in an outage is made again when the connection is back, and the waiters look', async () => {
    port.failNextSubscribe = true;
    const a = notifier.join('c', MESSAGES, { deadline: Infinity });
    const b = notifier.join('c', MESSAGES, { deadline: Infinity });
    expect(await a.ready(undefined)).toBe('ready'); // made, or failed: the waiter relies on its timer
    await port.settle();
    expect(port.calls).toEqual(['subscribe c']);
    const waitA = a.wait(10_000, undefined);
    const waitB = b.wait(10_000, undefined);
    port.reconnected();
    expect(await waitA).toBe('notified'); // at once, whatever became of the subscription
    await port.settle();
    expect(port.calls).toEqual(['subscribe c', 'subscribe c']);
    expect(await waitB).toBe('notified');
    // Subscribed now: the next release is heard.
    const again = a.wait(10_000, undefined);
    port.publish('c');
    expect(await again).toBe('notified');
    a.leave(false, 0);
    b.leave(false, 0);
    await port.settle();
    expect(port.calls).toEqual(['subscribe c', 'subscribe c', 'unsubscribe c']);
  });

  it('wakes only the oldest waiter per release', async () => {
    const a = notifier.join('c', MESSAGES, { deadline: Infinity });
    const b = notifier.join('c', MESSAGES, { deadline: Infinity });
    await port.settle();
    const waitA = a.wait(10_000, undefined);
    const waitB = b.wait(50, undefined);
    port.publish('c');
    expect(await waitA).toBe('notified');
    expect(await waitB).toBe('timeout');
  });

  it("a wake-up addressed to one waiter (a semaphore's next:<owner>) wakes it alone, wherever it is in the queue", async () => {
    const a = notifier.join('c', MESSAGES, { deadline: Infinity, owner: 'me:1' });
    const b = notifier.join('c', MESSAGES, { deadline: Infinity, owner: 'me:2' });
    expect([a.addressedEarly, b.addressedEarly]).toEqual([false, false]);
    await port.settle();
    const waitA = a.wait(50, undefined);
    const waitB = b.wait(10_000, undefined);
    port.publish('c', 'next:me:2');
    expect(await waitB).toBe('notified');
    expect(await waitA).toBe('timeout');
    port.publish('c', 'next:other:7'); // another process's waiter: nobody here is woken
    expect(await a.wait(50, undefined)).toBe('timeout');
  });

  it("a semaphore's grant (granted:<owner>:<token>:<lease end>) goes to that waiter alone, with its token and expiry, and is no hand-over", async () => {
    const a = notifier.join('c', MESSAGES, { deadline: Infinity, owner: 'me:1' });
    const b = notifier.join('c', MESSAGES, { deadline: Infinity, owner: 'me:2' });
    await port.settle();
    port.publish('c', 'granted:me:9:55:1700000000250'); // a caller not in this line: nobody here is handed it
    port.publish('c', 'granted:me:2:77:1700000000250');
    expect(await b.wait(10_000, undefined)).toBe('notified');
    expect(b.takeHandover()).toBeUndefined();
    expect(b.beingHandedOver).toBe(true); // a grant not taken yet: the waiter takes it before its deadline ends the wait
    expect(b.takeGrant()).toEqual({ token: 77, expiresAtServerMs: 1700000000250, leaseMs: SEMAPHORE_GRANT_LEASE_MS });
    expect(b.takeGrant()).toBeUndefined(); // taken once
    expect(a.beingHandedOver).toBe(false);
    expect(await a.wait(50, undefined)).toBe('timeout');
    port.publish('c', 'granted:me:1:x:y'); // unreadable numbers: woken to look for itself, nothing handed
    expect(await a.wait(10_000, undefined)).toBe('notified');
    expect(a.beingHandedOver).toBe(false);
    expect(a.takeGrant()).toBeUndefined();
  });

  it('a waiter that leaves without taking its grant says it must be given back', async () => {
    const a = notifier.join('c', MESSAGES, { deadline: Infinity, owner: 'me:1' });
    const b = notifier.join('c', MESSAGES, { deadline: Infinity, owner: 'me:2' });
    await port.settle();
    port.publish('c', 'granted:me:1:77:1700000000250');
    expect(a.leave(false, 30_000)).toBe(true); // the permits held in its name must go back
    expect(b.leave(false, 30_000)).toBe(false); // nothing was given to it
  });

  it('a wake-up addressed to a waiter before it joined is claimed when it joins', async () => {
    notifier.join('c', MESSAGES, { deadline: Infinity, owner: 'me:1' });
    await port.settle();
    port.publish('c', 'next:me:2'); // me:2's attempt failed, its reply is still on its way
    expect(notifier.join('c', MESSAGES, { deadline: Infinity, owner: 'me:2' }).addressedEarly).toBe(true);
    expect(notifier.join('c', MESSAGES, { deadline: Infinity, owner: 'me:3' }).addressedEarly).toBe(false);
  });

  it('keeps a release that arrives while the waiter is busy, so its next wait returns at once', async () => {
    const a = notifier.join('c', MESSAGES, { deadline: Infinity });
    await port.settle();
    port.publish('c'); // a is between attempts, not waiting
    expect(await a.wait(10_000, undefined)).toBe('notified');
  });

  it('hands an unconsumed wake-up to the next waiter when its owner leaves without the lock', async () => {
    const a = notifier.join('c', MESSAGES, { deadline: Infinity });
    const b = notifier.join('c', MESSAGES, { deadline: Infinity });
    await port.settle();
    port.publish('c'); // meant for a, which is busy and then gives up
    a.leave(false, 30_000);
    expect(await b.wait(10_000, undefined)).toBe('notified');
  });

  it('when the head takes the lock, the next waiter is not woken but watches the new lease', async () => {
    const a = notifier.join('c', MESSAGES, { deadline: Infinity });
    const b = notifier.join('c', MESSAGES, { deadline: Infinity });
    await port.settle();
    const waitB = b.wait(Infinity, undefined); // not the head: no lease timer of its own
    port.publish('c'); // wakes a, which takes the lock
    a.leave(true, 40);
    expect(b.isHead).toBe(true);
    expect(await waitB).toBe('notified'); // re-armed to a's 40 ms lease, in case a dies holding it: a reason to look
  });

  it('when the head gives up, the next waiter is woken to look for itself', async () => {
    const a = notifier.join('c', MESSAGES, { deadline: Infinity });
    const b = notifier.join('c', MESSAGES, { deadline: Infinity });
    await port.settle();
    const waitB = b.wait(Infinity, undefined);
    a.leave(false, 30_000); // a times out without any pending wake-up
    expect(await waitB).toBe('notified');
  });

  it('a waiter that is not the head leaves without disturbing anyone', async () => {
    const a = notifier.join('c', MESSAGES, { deadline: Infinity });
    const b = notifier.join('c', MESSAGES, { deadline: Infinity });
    const c = notifier.join('c', MESSAGES, { deadline: Infinity });
    await port.settle();
    b.leave(false, 30_000);
    expect(await a.wait(30, undefined)).toBe('timeout');
    expect(await c.wait(30, undefined)).toBe('timeout');
    expect(a.isHead).toBe(true);
  });

  it('re-arming never extends a waiter past its own deadline', async () => {
    const a = notifier.join('c', MESSAGES, { deadline: Infinity });
    const b = notifier.join('c', MESSAGES, { deadline: performance.now() + 30 });
    await port.settle();
    const waitB = b.wait(Infinity, undefined);
    a.leave(true, 60_000);
    const started = performance.now();
    expect(await waitB).toBe('deadline'); // its own deadline came: the wait is over
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('a leave and a join in the same tick coalesce: the subscription simply stays', async () => {
    const a = notifier.join('c', MESSAGES, { deadline: Infinity });
    await port.settle();
    a.leave(false, 30_000);
    const b = notifier.join('c', MESSAGES, { deadline: Infinity });
    await port.settle();
    expect(await b.ready(undefined)).toBe('ready');
    expect(port.calls).toEqual(['subscribe c']);
  });

  it('a waiter joining while an unsubscribe is in flight waits for the resubscription', async () => {
    const a = notifier.join('c', MESSAGES, { deadline: Infinity });
    await port.settle();
    a.leave(false, 30_000);
    await new Promise((resolve) => setImmediate(resolve));
    expect(port.calls).toEqual(['subscribe c', 'unsubscribe c']); // in flight, not yet answered
    const b = notifier.join('c', MESSAGES, { deadline: Infinity });
    let ready = false;
    const readyB = b.ready(undefined).then((outcome) => {
      ready = true;
      return outcome;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(ready).toBe(false); // a stale "subscribed" flag must not let b retry while unsubscribed
    await port.settle();
    expect(await readyB).toBe('ready');
    expect(port.calls).toEqual(['subscribe c', 'unsubscribe c', 'subscribe c']);
  });

  it('wakes every waiter after a reconnect, and closes them all on close', async () => {
    const a = notifier.join('c', MESSAGES, { deadline: Infinity });
    const b = notifier.join('d', MESSAGES, { deadline: Infinity });
    await port.settle();
    port.reconnected();
    expect(await a.wait(10_000, undefined)).toBe('notified');
    expect(await b.wait(10_000, undefined)).toBe('notified');
    const waiting = a.wait(10_000, undefined);
    notifier.close();
    expect(await waiting).toBe('closed');
    expect(await notifier.join('e', MESSAGES, { deadline: Infinity }).wait(10_000, undefined)).toBe('closed');
  });

  it('ready() respects the deadline and the abort signal while the subscription is pending', async () => {
    const a = notifier.join('c', MESSAGES, { deadline: now() + 20 });
    expect(await a.ready(undefined)).toBe('timeout');
    const controller = new AbortController();
    const pending = a.ready(controller.signal);
    controller.abort();
    expect(await pending).toBe('aborted');
    await port.settle();
  });

  it("routes a plain lock's grants: ours to the caller it names, another process's wakes nobody, one to a caller not here is given back", async () => {
    const strays: string[] = [];
    const a = notifier.join('c', EXCLUSIVE_MESSAGES, { deadline: Infinity, owner: 'me:1' }, (owner, grant) => strays.push(`${owner}@${grant.token}`));
    const b = notifier.join('c', EXCLUSIVE_MESSAGES, { deadline: Infinity, owner: 'me:2' });
    await port.settle();
    let woken = '';
    void a.wait(Infinity, undefined).then((outcome) => (woken += `a:${outcome} `));
    void b.wait(Infinity, undefined).then((outcome) => (woken += `b:${outcome} `));
    port.publish('c', 'granted:someone-else:4:10:1700000000250');
    await new Promise((resolve) => setImmediate(resolve));
    expect(woken).toBe(''); // a grant to another process's caller: no herd here
    port.publish('c', 'granted:me:2:11:1700000000250');
    await new Promise((resolve) => setImmediate(resolve));
    expect(woken).toBe('b:notified '); // the caller the grant names, wherever it is in the line, alone
    expect(b.takeGrant()).toEqual({ token: 11, expiresAtServerMs: 1700000000250, leaseMs: GRANT_LEASE_MS });
    expect(a.takeGrant()).toBeUndefined();
    port.publish('c', 'granted:me:7:12:1700000000250'); // a caller of ours that left: given back by its token
    expect(strays).toEqual(['me:7@12']);
    a.leave(false, 30_000);
    b.leave(true, 30_000);
    await port.settle();
  });

  it("a grant to another process's caller shortens the first waiter's sleep to when that grant would expire", async () => {
    const a = notifier.join('c', EXCLUSIVE_MESSAGES, { deadline: Infinity, owner: 'me:1' });
    await port.settle();
    const started = now();
    const waiting = a.wait(60_000, undefined);
    port.publish('c', 'granted:someone-else:4:10:1700000000250');
    expect(await waiting).toBe('notified'); // woken early to look, not its own sleep running out
    const slept = now() - started;
    expect(slept).toBeGreaterThanOrEqual(GRANT_LEASE_MS);
    expect(slept).toBeLessThan(10_000);
    a.leave(false, 0);
    await port.settle();
  });

  it('asks to yield once the turn has lasted handoverTurn since the acquisition that began it, whatever the count', async () => {
    const timed = new LockLines(port, new LockEvents(), systemClock, 'me', 100);
    const a = timed.join('t', MESSAGES, { deadline: Infinity, terms: { owner: 'me:1', leaseMs: 1000 } });
    await port.settle();
    const sleeping = a.wait(Infinity, undefined);
    // The holder that began the turn acquired 50 ms ago: the turn goes on.
    expect(timed.nextHandover('t', now() - 50)?.yieldToOthers).toBe(false);
    void a.takeHandover();
    // Later hand-overs count from that same start, not from their own holder's acquisition.
    expect(timed.nextHandover('t', now())?.yieldToOthers).toBe(false);
    void a.takeHandover();
    // A turn whose first holder acquired 150 ms ago yields at once (a slow link, a long section).
    const b = new LockLines(port, new LockEvents(), systemClock, 'me', 100);
    const w = b.join('u', MESSAGES, { deadline: Infinity, terms: { owner: 'me:2', leaseMs: 1000 } });
    await port.settle();
    const sleepingW = w.wait(Infinity, undefined);
    expect(b.nextHandover('u', now() - 150)?.yieldToOthers).toBe(true);
    a.waiter.notify();
    w.waiter.notify();
    await Promise.all([sleeping, sleepingW]);
    a.leave(false, 0);
    w.leave(false, 0);
    await port.settle();
  });

  it('picks the sleeping first waiter as successor of a local release, and asks to yield after a streak', async () => {
    const a = notifier.join('c', MESSAGES, { deadline: Infinity, terms: { owner: 'me:1', leaseMs: 1000 } });
    await port.settle();
    expect(notifier.nextHandover('c', now())).toBeUndefined(); // awake (about to attempt): it would race the hand-over
    const sleeping = a.wait(Infinity, undefined);
    const yields: boolean[] = [];
    for (let i = 0; i <= MAX_HANDOVER_STREAK; i++) {
      const chosen = notifier.nextHandover('c', now());
      expect(chosen?.terms.owner).toBe('me:1');
      expect(a.beingHandedOver).toBe(true);
      expect(chosen?.next).toBeUndefined(); // nobody waits after it here
      expect(notifier.nextHandover('c', now())).toBeUndefined(); // one hand-over at a time
      yields.push(chosen!.yieldToOthers);
      void a.takeHandover();
    }
    expect(yields.filter(Boolean)).toEqual([true]);
    expect(yields[MAX_HANDOVER_STREAK]).toBe(true);
    a.waiter.notify();
    await sleeping;
    a.leave(false, 0);
    await port.settle();
  });

  it('a wake-up time asked for while the waiter is busy applies to its next sleep', async () => {
    const a = notifier.join('c', MESSAGES, { deadline: Infinity });
    await port.settle();
    a.waiter.wakeWithin(20); // busy (not in wait): must not be lost
    const started = now();
    expect(await a.wait(60_000, undefined)).toBe('notified');
    expect(now() - started).toBeLessThan(5_000);
    a.leave(false, 0);
    await port.settle();
  });

  it('close() ends a ready() whose subscription is never answered', async () => {
    const a = notifier.join('c', MESSAGES, { deadline: Infinity });
    const pending = a.ready(undefined);
    notifier.close();
    expect(await pending).toBe('closed');
  });

  it('after a reconnect, re-subscribes the channels it waits on and has their waiters look again once that is done', async () => {
    const a = notifier.join('c', MESSAGES, { deadline: Infinity });
    await port.settle();
    expect(port.calls).toEqual(['subscribe c']);
    port.reconnected();
    expect(await a.wait(10_000, undefined)).toBe('notified'); // at once
    let second = false;
    const looking = a.wait(10_000, undefined).then((outcome) => {
      second = true;
      return outcome;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(second).toBe(false); // not before the re-subscription is confirmed
    await port.settle();
    expect(await looking).toBe('notified');
    expect(port.calls).toEqual(['subscribe c', 'subscribe c']);
    a.leave(false, 0);
    await port.settle();
  });
});
