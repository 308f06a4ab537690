import type { SubscriberPort } from '../connection/subscriber-port.js';
import { BackgroundWork } from '../engine/background-work.js';
import type { HeldLockHandle } from '../engine/held-lock-handle.js';
import { HeldLocks } from '../engine/held-locks.js';
import type { RenewResult } from '../engine/lease-resource.js';
import type { HoldTerms, LockRuntime } from '../engine/lock-runtime.js';
import { RoundTrips } from '../engine/round-trips.js';
import { LockBackendError } from '../errors/lock-backend.error.js';
import { LockCircuitOpenError } from '../errors/lock-circuit-open.error.js';
import { CommandNotSentError } from '../redis/command-not-sent.js';
import { LockEvents } from '../events/lock-events.js';
import type { ReleaseReply } from '../scripts/lock-script.js';
import { systemClock } from '../util/clock.js';
import { LockLines } from '../waiting/lock-lines.js';
import { Acquisition } from './acquisition.js';
import type { AttemptArgs, AttemptResult, LockKindContract } from './lock-kind.js';
import { SEMAPHORE_MESSAGES } from './semaphore/semaphore.messages.js';

/**
 * One acquisition on its own, without Redis: a scripted lock kind answers its attempts, a fake runtime
 * stands for the engine (the real lines, registry, round trips and background work; releases and
 * registration recorded). Lock semantics themselves are tested against Redis in test/conformance.
 */
class ScriptedKind implements LockKindContract {
  readonly name = 'a';
  readonly kind = 'reentrant' as const;
  readonly id = 'lock:{a}';
  readonly channel = 'lock:{a}:released';
  readonly shared = false;
  readonly maxPauseMs = Infinity;
  /** Its channel hears `released`, and grants addressed to its waiters (a semaphore's messages). */
  readonly messages = SEMAPHORE_MESSAGES;
  readonly attempts: AttemptArgs[] = [];
  /** Owners released by the kind's own release (the late grant's give-back goes there). */
  readonly released: string[] = [];

  constructor(readonly countsHolds = true) {}
  /** What each attempt replies, in order: a result, an error, or a promise the test settles. */
  readonly replies: (AttemptResult | Error | Promise<AttemptResult>)[] = [];
  readonly adjusted: number[] = [];

  attempt(args: AttemptArgs): Promise<AttemptResult> {
    this.attempts.push(args);
    const next = this.replies.shift() ?? { acquired: false, ttl: 60_000 };
    return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
  }
  /** The correction of holds never answers (Redis unreachable for it). */
  adjustHangs = false;

  adjustHolds(_owner: string, holds: number): Promise<void> {
    this.adjusted.push(holds);
    return this.adjustHangs ? new Promise(() => undefined) : Promise.resolve();
  }
  renew(): Promise<RenewResult> {
    return Promise.resolve({ renewed: true, validityMs: 1000 });
  }
  /** The token each release named (a late grant's give-back names its own). */
  readonly releasedTokens: (number | undefined)[] = [];
  /** Each release as `<token>:one` (one hold) or `<token>:all` (the whole hold). */
  readonly releases: string[] = [];

  release(owner: string, all: boolean, _expected?: number, token?: number): Promise<ReleaseReply> {
    this.released.push(owner);
    this.releasedTokens.push(token);
    this.releases.push(`${token}:${all ? 'all' : 'one'}`);
    return Promise.resolve({ outcome: 'released', remaining: 0, toAnotherProcess: false });
  }
}

/** The subscription port of the lines: subscriptions succeed at once; `publish` delivers a message. */
class InstantPort implements SubscriberPort {
  private listener: ((channel: string, message: string) => void) | undefined;
  subscribe(): Promise<unknown> {
    return Promise.resolve(1);
  }
  unsubscribe(): Promise<unknown> {
    return Promise.resolve(0);
  }
  onMessage(listener: (channel: string, message: string) => void): void {
    this.listener = listener;
  }
  onReconnect(): void {}
  publish(channel: string, message: string): void {
    this.listener?.(channel, message);
  }
}

function fakeRuntime(
  timeoutMs = 100,
  localTimeOf: (serverMs: number) => number | undefined = () => undefined,
): {
  runtime: LockRuntime;
  background: BackgroundWork;
  registered: HoldTerms[];
  releasedFor: string[];
  claimed: string[];
  subscriber: InstantPort;
  stop(): void;
} {
  const events = new LockEvents();
  const roundTrips = new RoundTrips(timeoutMs, systemClock);
  const subscriber = new InstantPort();
  const registered: HoldTerms[] = [];
  const releasedFor: string[] = [];
  const claimed: string[] = [];
  const background = new BackgroundWork(events, roundTrips);
  const lines = new LockLines(subscriber, events, systemClock, 'me');
  const runtime = {
    watchdogTimeoutMs: 30_000,
    operationTimeoutMs: timeoutMs,
    replicaAck: undefined,
    clock: systemClock,
    events,
    lines,
    held: new HeldLocks(systemClock),
    releases: { settled: () => Promise.resolve(true), unsettled: () => false, releaseFor: (_resource: unknown, owner: string) => void releasedFor.push(owner) },
    roundTrips,
    background,
    isClosed: false,
    assertOpen: () => undefined,
    announce: () => undefined,
    register: (terms: HoldTerms) => {
      registered.push(terms);
      return { token: terms.token } as unknown as HeldLockHandle;
    },
    claim: (key: string) => void claimed.push(key),
    localTimeOf,
  } satisfies Partial<LockRuntime> as unknown as LockRuntime;
  return { runtime, background, registered, releasedFor, claimed, subscriber, stop: () => (roundTrips.stop(), lines.close()) };
}

const owner = { id: 'me:1', outsideContext: false };
const request = (waitMs: number) => ({ leaseMs: 5000, waitMs, signal: undefined });

describe('Acquisition', () => {
  it('a free lock is registered from the first attempt, with the lease asked for', async () => {
    const { runtime, registered, stop } = fakeRuntime();
    const kind = new ScriptedKind();
    kind.replies.push({ acquired: true, token: 7, holds: 1 });
    const handle = await new Acquisition(kind, runtime, owner, request(0)).run();
    expect(handle).toMatchObject({ token: 7 });
    expect(registered).toMatchObject([{ token: 7, holds: 1, leaseMs: 5000, watchdog: false }]);
    expect(kind.attempts).toMatchObject([{ owner: 'me:1', willWait: false, queued: false }]);
    stop();
  });

  it('a busy lock without a wait: the holder’s remaining lease, one attempt, no place in a line', async () => {
    const { runtime, stop } = fakeRuntime();
    const kind = new ScriptedKind();
    kind.replies.push({ acquired: false, ttl: 1234 });
    expect(await new Acquisition(kind, runtime, owner, request(0)).run()).toEqual({ ttl: 1234 });
    expect(kind.attempts).toHaveLength(1);
    expect(runtime.lines.count(kind.channel)).toBe(0);
    stop();
  });

  it('a waiting caller queues, is woken by the release message, and acquires on its next attempt', async () => {
    const { runtime, subscriber, stop } = fakeRuntime();
    const kind = new ScriptedKind();
    kind.replies.push({ acquired: false, ttl: 60_000 }, { acquired: false, ttl: 60_000 });
    const running = new Acquisition(kind, runtime, owner, request(10_000)).run();
    while (kind.attempts.length < 2) await new Promise((resolve) => setImmediate(resolve)); // the first, and the one after subscribing
    expect(runtime.lines.count(kind.channel)).toBe(1);
    kind.replies.push({ acquired: true, token: 9, holds: 1 });
    subscriber.publish(kind.channel, 'released');
    expect(await running).toMatchObject({ token: 9 });
    expect(kind.attempts.slice(1).every((attempt) => attempt.queued)).toBe(true);
    expect(runtime.lines.count(kind.channel)).toBe(0);
    stop();
  });

  /** A waiter queued behind a holder, then sent `granted:me:1:<token>:<server ms>` (a semaphore's release granted it permits). */
  async function grantedWaiter(localTimeOf: (serverMs: number) => number | undefined) {
    const fake = fakeRuntime(100, localTimeOf);
    const kind = new ScriptedKind();
    const running = new Acquisition(kind, fake.runtime, owner, request(10_000)).run();
    while (kind.attempts.length < 2) await new Promise((resolve) => setImmediate(resolve));
    return { ...fake, kind, running };
  }

  it('a grant heard on the channel is held from the message, valid until its expiry on the local clock, and claimed', async () => {
    const now = performance.now();
    // The server's ms 1_000_250 falls at local time now + 200 at the earliest.
    const { subscriber, kind, running, registered, claimed, stop } = await grantedWaiter((serverMs) => now + 200 + (serverMs - 1_000_250));
    subscriber.publish(kind.channel, 'granted:me:1:77:1000250');
    expect(await running).toMatchObject({ token: 77 });
    expect(kind.attempts).toHaveLength(2); // no attempt after the message
    expect(registered[0]!.startedAt + registered[0]!.validityMs).toBeLessThanOrEqual(now + 200);
    expect(claimed).toHaveLength(1);
    stop();
  });

  it('a grant whose expiry this clock cannot place, or too close, is taken by an attempt instead (control)', async () => {
    for (const localTimeOf of [() => undefined, () => performance.now() + 50]) {
      const { subscriber, kind, running, claimed, stop } = await grantedWaiter(localTimeOf);
      kind.replies.push({ acquired: true, token: 77, holds: 1 });
      subscriber.publish(kind.channel, 'granted:me:1:77:1000250');
      expect(await running).toMatchObject({ token: 77 });
      expect(kind.attempts).toHaveLength(3);
      expect(claimed).toHaveLength(0);
      stop();
    }
  });

  it('no attempt starts after the deadline: an attempt that hangs past it ends the wait with its backend error', async () => {
    const { runtime, stop } = fakeRuntime(80);
    const kind = new ScriptedKind();
    kind.replies.push(new Promise<AttemptResult>(() => undefined)); // Redis does not answer
    const started = performance.now();
    await expect(new Acquisition(kind, runtime, owner, request(30)).run()).rejects.toBeInstanceOf(LockBackendError);
    expect(kind.attempts).toHaveLength(1); // the wait (30 ms) was over when the first attempt was given up (80 ms)
    expect(performance.now() - started).toBeLessThan(30 + 80 + 200);
    stop();
  });

  /**
   * An attempt given up on (no reply within the operation timeout) whose grant comes back after the
   * acquisition's next attempt was granted: the next attempt found the owner holding the lock.
   */
  async function lateGrantAfterTheNextAttempt(countsHolds: boolean) {
    const { runtime, registered, stop } = fakeRuntime(50);
    const kind = new ScriptedKind(countsHolds);
    let answerLate!: (result: AttemptResult) => void;
    kind.replies.push(new Promise<AttemptResult>((resolve) => (answerLate = resolve)), { acquired: true, token: 7, holds: 1 });
    const handle = await new Acquisition(kind, runtime, owner, request(10_000)).run();
    answerLate({ acquired: true, token: 7, holds: 1 });
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    return { handle, kind, registered, stop };
  }

  it('a late grant to a kind with one lease per owner (a semaphore) is kept when a later attempt took that very lease', async () => {
    const { handle, kind, registered, stop } = await lateGrantAfterTheNextAttempt(false);
    expect(registered).toHaveLength(1);
    expect(handle).toMatchObject({ token: 7 });
    // Giving it back would release the lease the caller now holds (found by the simulator: a semaphore
    // over its size while both callers held their permits validly).
    expect(kind.released).toEqual([]);
    stop();
  });

  it('control: a late grant to a kind that counts holds gives its one hold back (Redis counted the later grant too)', async () => {
    const { kind, stop } = await lateGrantAfterTheNextAttempt(true);
    expect(kind.released).toEqual(['me:1']);
    stop();
  });

  it("a late grant is given back in its own lifetime only: the release names the late grant's token, not the new one", async () => {
    // Its lease ran out before the next attempt, which began a new lifetime (token 8): a release that
    // does not name the late grant's token (5) dropped the new hold, and the lock went to another caller
    // while this one held it (found by the simulator).
    const { runtime, stop } = fakeRuntime(50);
    const kind = new ScriptedKind(true);
    let answerLate!: (result: AttemptResult) => void;
    kind.replies.push(new Promise<AttemptResult>((resolve) => (answerLate = resolve)), { acquired: true, token: 8, holds: 1 });
    const handle = await new Acquisition(kind, runtime, owner, request(10_000)).run();
    answerLate({ acquired: true, token: 5, holds: 1 });
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(handle).toMatchObject({ token: 8 });
    expect(kind.releasedTokens).toEqual([5]);
    stop();
  });

  /**
   * An attempt given up on (no reply within the operation timeout) that Redis ran after all, re-entering
   * a hold of this owner (holds 2): in Redis, a grant a release made to this caller while the attempt
   * was on its way. The acquisition then ends (aborted), or gets the lock with a later attempt.
   */
  async function lateReentry(ends: 'aborted' | 'acquired') {
    const { runtime, stop } = fakeRuntime(50);
    const kind = new ScriptedKind();
    let answerLate!: (result: AttemptResult) => void;
    kind.replies.push(new Promise<AttemptResult>((resolve) => (answerLate = resolve)));
    if (ends === 'acquired') kind.replies.push({ acquired: true, token: 9, holds: 1 });
    const abort = new AbortController();
    const acquisition = new Acquisition(kind, runtime, owner, { ...request(10_000), signal: abort.signal }).run();
    if (ends === 'aborted') {
      while (kind.attempts.length === 0) await new Promise((resolve) => setImmediate(resolve));
      abort.abort();
      await expect(acquisition).rejects.toThrow();
    } else await acquisition;
    answerLate({ acquired: true, token: 9, holds: 2 });
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
    stop();
    return kind.releases;
  }

  it('a late attempt that re-entered a grant to a caller that then stopped waiting: the whole hold goes, in its lifetime', async () => {
    // Its one hold given back, the grant's stayed, no longer marked granted, for a whole lease: a
    // resigned leader-election candidate left the leadership held after every client closed (CI runs).
    expect(await lateReentry('aborted')).toEqual(['9:one', '9:all']);
  });

  it('control: when the caller got the lock with a later attempt, only the late attempt’s own hold is given back', async () => {
    expect(await lateReentry('acquired')).toEqual(['9:one']);
  });

  it('an attempt given up on is background work: close() waits for its reply and the give-back of its late grant', async () => {
    // Before, a reply that came while the client closed found the connections gone, and its hold stayed
    // for a whole lease (RedLock: a leader-election candidate resigned during its attempt, CI runs).
    const { runtime, background, stop } = fakeRuntime(50);
    const kind = new ScriptedKind();
    let answerLate!: (result: AttemptResult) => void;
    kind.replies.push(new Promise<AttemptResult>((resolve) => (answerLate = resolve)));
    await expect(new Acquisition(kind, runtime, owner, request(0)).run()).rejects.toBeInstanceOf(LockBackendError);
    const settled = background.settledBy(runtime.clock.now() + 5000);
    setTimeout(() => answerLate({ acquired: true, token: 4, holds: 1 }), 20);
    expect(await settled).toEqual(new Map());
    expect(kind.releases).toEqual(['4:one']);
    stop();
  });

  it('a phantom whose correction has no answer by the deadline: the owner holds what it knows, so its one unlock is its last', async () => {
    // Registering Redis's count (2) made the owner's unlock drop one hold and leave the phantom held
    // after that unlock succeeded (found by the simulator).
    const { runtime, registered, stop } = fakeRuntime(50);
    const kind = new ScriptedKind();
    kind.adjustHangs = true;
    kind.replies.push({ acquired: true, token: 7, holds: 2 });
    await new Acquisition(kind, runtime, owner, request(0)).run();
    expect(kind.adjusted).toEqual([1]);
    expect(registered).toMatchObject([{ holds: 1 }]);
    stop();
  });

  it('holds Redis reports beyond what the owner knows (a phantom) are corrected before the handle is returned', async () => {
    const { runtime, registered, stop } = fakeRuntime();
    const kind = new ScriptedKind();
    kind.replies.push({ acquired: true, token: 7, holds: 2 });
    await new Acquisition(kind, runtime, owner, request(0)).run();
    expect(kind.adjusted).toEqual([1]);
    expect(registered).toMatchObject([{ holds: 1 }]);
    stop();
  });

  it('an attempt whose outcome is unknown (it failed) leaves nothing in the owner’s name when the acquisition ends without the lock', async () => {
    const { runtime, releasedFor, stop } = fakeRuntime();
    const kind = new ScriptedKind();
    kind.replies.push(new Error('connection reset'));
    await expect(new Acquisition(kind, runtime, owner, request(0)).run()).rejects.toBeInstanceOf(LockBackendError);
    expect(releasedFor).toEqual(['me:1']);
    stop();
  });

  it('an attempt refused before it was sent (an open circuit breaker) was not run: nothing to release in the owner’s name', async () => {
    const { runtime, releasedFor, stop } = fakeRuntime();
    const kind = new ScriptedKind();
    kind.replies.push(new CommandNotSentError('the circuit breaker of 127.0.0.1:6379 is open', undefined, { node: '127.0.0.1:6379', retryAfterMs: 800 }));
    const failure = new Acquisition(kind, runtime, owner, request(0)).run();
    await expect(failure).rejects.toBeInstanceOf(LockCircuitOpenError);
    await expect(failure).rejects.toMatchObject({ code: 'LOCK_CIRCUIT_OPEN', node: '127.0.0.1:6379', retryAfterMs: 800 });
    expect(releasedFor).toEqual([]);
    stop();
  });

  it('a waiting caller keeps waiting through refusals, backing off between attempts, and gets the refusal at its deadline', async () => {
    const { runtime, releasedFor, stop } = fakeRuntime();
    const kind = new ScriptedKind();
    const refusal = () => new CommandNotSentError('open', undefined, { node: 'n', retryAfterMs: 0 });
    for (let i = 0; i < 50; i++) kind.replies.push(refusal());
    await expect(new Acquisition(kind, runtime, owner, request(300)).run()).rejects.toBeInstanceOf(LockCircuitOpenError);
    // Back-off of 50, 100, 200 ms between attempts: a handful in 300 ms, not a spin.
    expect(kind.attempts.length).toBeGreaterThanOrEqual(2);
    expect(kind.attempts.length).toBeLessThanOrEqual(5);
    expect(releasedFor).toEqual([]);
    stop();
  });
});
