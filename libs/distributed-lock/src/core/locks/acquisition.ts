import type { ReplicaAck } from '../config/replica-ack.js';
import { notExecuted } from '../connection/not-executed.js';
import { registryKey, type RegistryKey } from '../engine/held-locks.js';
import type { LockRuntime, Owner } from '../engine/lock-runtime.js';
import { AbandonedOperation } from '../engine/round-trips.js';
import type { HeldLockHandle } from '../engine/held-lock-handle.js';
import { DistributedLockError } from '../errors/distributed-lock.error.js';
import { LockAcquireAbortedError } from '../errors/lock-acquire-aborted.error.js';
import { LockBackendError } from '../errors/lock-backend.error.js';
import { LockClientClosedError } from '../errors/lock-client-closed.error.js';
import type { Clock } from '../util/clock.js';
import { pause, settleWithin } from '../util/late-timer.js';
import type { HandoverOutcome } from '../waiting/handover.js';
import type { Grant } from '../waiting/line-event.js';
import type { AcquireRequest } from './acquire-options.js';
import type { AttemptResult, Acquired, LockKindContract } from './lock-kind.js';

/** What an acquisition comes to: the handle, or the holder's remaining lease when the wait ran out. */
export type AcquireOutcome = HeldLockHandle | { ttl: number };

/** Retry pause after a Redis error while waiting: doubles from 50 ms up to 1 s. */
const ERROR_BACKOFF_MS = [50, 100, 200, 400, 800, 1000];
/** Pause when the lock exists without an expiry (should not happen with this library's keys). */
const NO_TTL_PAUSE_MS = 100;

/**
 * One acquisition of one lock: attempt, wait without polling (woken by releases, or handed the lock
 * by a release in this process), give up at the deadline or on abort, and leave nothing behind when it
 * ends without the lock. Created per call by BaseLock.acquire; its state lives here, not in the lock.
 */
export class Acquisition {
  private readonly owner: string;
  /** This owner's hold on this lock in the registry of held locks. */
  private readonly key: RegistryKey;
  private readonly leaseMs: number;
  private readonly watchdog: boolean;
  private readonly replicaAck: ReplicaAck | undefined;
  private readonly signal: AbortSignal | undefined;
  private readonly willWait: boolean;
  private readonly clock: Clock;
  private readonly calledAt: number;
  private readonly deadline: number;
  /**
   * When the caller has its answer at the latest, whatever Redis does: an attempt starts only before
   * the deadline and is given up one operation timeout after it started, so the deadline plus one
   * operation timeout. Clean-up still running then goes on in the background. (Infinity without a deadline.)
   */
  private readonly answerBy: number;
  /** The caller is in this process's queue of waiters for the lock. */
  private queued = false;
  /** An attempt failed with an unknown outcome: it may have been granted without our knowing. */
  private uncertain = false;
  /** The last attempt given up on before its reply (timeout, abort): Redis may still run it. */
  private abandoned: Promise<unknown> | undefined;
  /** Whether this acquisition ended holding the lock, once it has ended. */
  private readonly ended: Promise<boolean>;
  private settleEnded!: (granted: boolean) => void;

  constructor(
    private readonly lock: LockKindContract,
    private readonly runtime: LockRuntime,
    private readonly who: Owner,
    request: AcquireRequest,
  ) {
    this.ended = new Promise((resolve) => (this.settleEnded = resolve));
    this.clock = runtime.clock;
    this.calledAt = this.clock.now();
    this.owner = who.id;
    this.key = registryKey(who.id, lock);
    this.leaseMs = request.leaseMs ?? runtime.watchdogTimeoutMs;
    this.watchdog = request.leaseMs === undefined;
    this.replicaAck = request.replicaAck === undefined ? runtime.replicaAck : (request.replicaAck ?? undefined);
    this.signal = request.signal;
    this.willWait = request.waitMs > 0;
    this.deadline = this.calledAt + request.waitMs;
    this.answerBy = this.deadline + runtime.operationTimeoutMs;
  }

  /**
   * Acquires, waiting per the request. Returns the handle, or the last seen TTL on timeout. close()
   * waits for it to end (see BackgroundWork.acquisitionStarted).
   */
  async run(): Promise<AcquireOutcome> {
    const { runtime, lock } = this;
    runtime.assertOpen('acquire lock', lock.name);
    if (this.signal?.aborted) throw new LockAcquireAbortedError(lock.name, this.signal.reason);
    runtime.announce(); // once per process (see InstanceRegistration)
    runtime.background.acquisitionStarted();
    const finished = runtime.held.beginAcquisition(this.key);
    let granted = false;
    try {
      const outcome = await this.attemptOrWait();
      granted = !('ttl' in outcome);
      return outcome;
    } catch (error) {
      const outcome = error instanceof LockAcquireAbortedError ? 'aborted' : 'error';
      runtime.events.emit('failed', { name: lock.name, kind: lock.kind, outcome, waitedMs: this.waited(), error: error as Error });
      throw error;
    } finally {
      finished();
      this.settleEnded(granted);
      if (!granted) await this.leaveNothingBehindWithin().finally(() => runtime.background.acquisitionEnded());
      else runtime.background.acquisitionEnded();
    }
  }

  /** leaveNothingBehind, awaited until `answerBy` at the latest; past it, it finishes in the background. */
  private async leaveNothingBehindWithin(): Promise<void> {
    const cleanUp = this.leaveNothingBehind();
    const done = await settleWithin(
      this.clock,
      cleanUp.then(() => true),
      this.answerBy - this.clock.now(),
      () => false,
    );
    if (!done) this.runtime.background.run('release', this.lock.name, () => cleanUp);
  }

  private async attemptOrWait(): Promise<AcquireOutcome> {
    const { runtime, lock } = this;
    // A release of this owner's is under way (retried, its outcome unknown, or a give-back): wait for
    // it, or a re-entry could stack a hold on a lock meant to be released, or the release drop this one.
    if (runtime.releases.unsettled(this.key) && !(await runtime.releases.settled(this.key, this.deadline))) return this.timedOut(0);
    // Callers of this process already wait for this lock: queue behind them instead of overtaking them
    // (a release here hands the lock to the first of them). Not when re-entering a lock we hold.
    if (this.willWait && this.handsOverToMe() && runtime.lines.count(lock.channel) > 0 && !runtime.held.find(this.key)?.active) {
      return this.waitFor(0, undefined);
    }
    let first: AttemptResult | undefined;
    let firstError: LockBackendError | undefined;
    const startedAt = this.clock.now();
    try {
      first = await this.attemptOnce();
    } catch (error) {
      if (error instanceof LockBackendError && !notExecuted(error)) this.uncertain = true;
      // A caller willing to wait waits through a Redis hiccup too; one that is not gets the error.
      if (!(error instanceof LockBackendError) || !this.willWait) throw error;
      firstError = error;
    }
    if (first?.acquired) return this.acquired(first, startedAt);
    if (first && !this.willWait) return this.timedOut(first.ttl);
    return this.waitFor(first?.ttl ?? 0, firstError);
  }

  /** Waits in this process's queue for the lock, attempting when woken, until granted or the deadline. */
  private async waitFor(firstTtl: number, firstError: LockBackendError | undefined): Promise<AcquireOutcome> {
    const { runtime, lock, signal } = this;
    const handover = lock.handover;
    const giveBack = handover ? (owner: string, grant: Grant) => handover.giveBackGrant(owner, grant.token) : undefined;
    // A plain lock released by another caller of this process may be handed to this one directly.
    const terms = this.handsOverToMe() ? { owner: this.owner, leaseMs: this.leaseMs, watchdog: this.watchdog } : undefined;
    const place = runtime.lines.join(lock.channel, lock.messages, { deadline: this.deadline, shared: lock.shared, owner: this.owner, terms }, giveBack);
    this.queued = true;
    let acquired = false;
    try {
      const ready = await place.ready(signal);
      if (ready === 'aborted') throw new LockAcquireAbortedError(lock.name, signal?.reason);
      if (ready === 'closed') throw new LockClientClosedError(`wait for lock "${lock.name}"`);
      // The subscription took the whole wait (an outage): no attempt starts after the deadline.
      if (ready === 'timeout' && !place.beingHandedOver) return this.endOfWait(firstTtl, firstError);
      // First in the local queue: retry now that the subscription is in place, in case the lock was
      // released in between. Queued behind others: such a release woke the head; wait for our turn.
      // A wake-up addressed to this waiter (a semaphore's) that came before it joined: look now.
      let attemptNow = place.isHead || place.addressedEarly;
      let ttl = firstTtl;
      let failures = firstError ? 1 : 0;
      let lastError = firstError;
      // Without a deadline, an outage must still surface: give up after operationTimeout of failures.
      let failingSince = firstError ? this.calledAt : undefined;
      const failureBudget = Number.isFinite(this.deadline) ? Infinity : runtime.operationTimeoutMs;
      for (;;) {
        const handingOver = place.takeHandover();
        const handed = handingOver && (await handingOver);
        if (handed && !handed.granted && handed.uncertain) this.uncertain = true;
        const grant = place.takeGrant();
        // A release in this process handed us the lock, or a release anywhere granted it to us and said so: ours without asking Redis.
        const handle = handed && handed.granted ? this.takeHandedLock(handed) : grant ? this.takeGrant(grant) : undefined;
        if (handle) {
          acquired = true;
          return handle;
        }
        // Handed nothing, or a grant this waiter cannot hold on its message (see takeGrant): its attempt looks.
        if (handed || grant) attemptNow = true;
        if (attemptNow && this.clock.now() >= this.deadline) return this.endOfWait(ttl, lastError);
        if (attemptNow) {
          try {
            const startedAt = this.clock.now();
            const result = await this.attemptOnce();
            lastError = undefined;
            failures = 0;
            failingSince = undefined;
            if (result.acquired) {
              acquired = true;
              runtime.events.emit('waited', { name: lock.name, kind: lock.kind, waitedMs: this.waited() });
              return await this.acquired(result, startedAt);
            }
            ttl = result.ttl;
          } catch (error) {
            if (!(error instanceof LockBackendError)) throw error;
            lastError = error; // Redis hiccup (restart, failover): keep waiting, retry with back-off.
            if (!notExecuted(error)) this.uncertain = true; // a call that was not run granted nothing
            failingSince ??= this.clock.now();
            if (this.clock.now() - failingSince >= failureBudget) throw error;
          }
        }
        attemptNow = true;
        const remaining = this.deadline - this.clock.now();
        if (remaining <= 0) return this.endOfWait(ttl, lastError);
        // When nothing failed, the first in the line watches the holder's lease (for a holder that dies
        // without releasing); the others sleep until their turn or their deadline.
        const watch = !place.isHead ? Infinity : ttl > 0 ? ttl : NO_TTL_PAUSE_MS;
        const sleep = lastError ? ERROR_BACKOFF_MS[Math.min(failures++, ERROR_BACKOFF_MS.length - 1)]! : watch;
        const outcome = await place.wait(Math.min(sleep, lock.maxPauseMs, remaining), signal);
        // Woken by a message: a kind whose waiters must not all try at once (RedLock) waits a random while.
        if (outcome === 'notified' && lock.wakeJitterMs) await pause(this.clock, Math.random() * lock.wakeJitterMs);
        if (outcome === 'aborted') throw new LockAcquireAbortedError(lock.name, signal?.reason);
        if (outcome === 'closed') throw new LockClientClosedError(`wait for lock "${lock.name}"`);
        // Slept until the deadline: the wait is over, without one more attempt after it.
        if (outcome === 'deadline' && !place.beingHandedOver) return this.endOfWait(ttl, lastError);
      }
    } finally {
      this.queued = false;
      // Leaving while a release was handing us the lock or had granted it: give it back if it was (or may have been) granted.
      if (place.leave(acquired, this.leaseMs)) runtime.releases.releaseFor(lock, this.owner);
    }
  }

  /** Registers the lock a release in this process took in this waiter's name: its lease counts from the release, as an attempt's. */
  private takeHandedLock(handed: Extract<HandoverOutcome, { granted: true }>): HeldLockHandle {
    const { runtime, lock } = this;
    runtime.events.emit('waited', { name: lock.name, kind: lock.kind, waitedMs: this.waited() });
    return this.register({ acquired: true, token: handed.token, holds: 1 }, 1, handed.startedAt);
  }

  /**
   * Registers what a release granted this waiter in Redis (a semaphore's permits), held from the message
   * until the grant's lease ends, placed on the local clock no later than on the server's, and claimed in
   * the background (one renewal to the waiter's own lease). Undefined when a grant cannot be held so:
   * with replica acknowledgement (the grant is not confirmed), when the server's clock is not bounded
   * here (unknown yet, or a node of several servers), when less than half the grant's lease is left
   * on this clock (a late wake-up: the claim would likely land late), or after an attempt whose outcome
   * is not known. The waiter's attempt then finds the
   * grant held in its name and takes it with its own lease, a round trip as before.
   */
  private takeGrant(grant: Grant): HeldLockHandle | undefined {
    const { runtime, lock } = this;
    const now = this.clock.now();
    // An attempt of ours given up on, or failed with an unknown outcome, may have run after the grant
    // and taken it anew (a new token, our lease): the message no longer says what Redis holds. The
    // attempt then finds out (simulator seed 13405: held by the message past the lease in Redis).
    if (this.abandoned || this.uncertain) return undefined;
    const expiresAt = this.replicaAck ? undefined : runtime.localTimeOf(grant.expiresAtServerMs);
    if (expiresAt === undefined || expiresAt - now < grant.leaseMs / 2) return undefined;
    runtime.events.emit('waited', { name: lock.name, kind: lock.kind, waitedMs: this.waited() });
    const handle = this.register({ acquired: true, token: grant.token, holds: 1, validityMs: expiresAt - now }, 1, now);
    runtime.claim(this.key);
    return handle;
  }

  /** The deadline came: the last Redis error if the last attempt failed, else a timeout. */
  private endOfWait(ttl: number, lastError: LockBackendError | undefined): { ttl: number } {
    if (lastError) throw lastError;
    return this.timedOut(ttl);
  }

  /**
   * One bounded attempt. If it is abandoned (operation timeout, caller abort) and Redis grants it
   * after all, the late grant is released again so that nobody sits out a lease nobody holds.
   * The caller notes when it started the attempt: a grant's lease counts from then.
   */
  private async attemptOnce(): Promise<AttemptResult> {
    const { runtime, lock, signal } = this;
    runtime.assertOpen('acquire lock', lock.name);
    const pending = lock.attempt({
      owner: this.owner,
      leaseMs: this.leaseMs,
      watchdog: this.watchdog,
      replicaAck: this.replicaAck,
      willWait: this.willWait,
      queued: this.queued,
    });
    try {
      return await runtime.roundTrips.bounded(pending, signal);
    } catch (error) {
      if (error instanceof AbandonedOperation) {
        this.abandoned = pending;
        // Background work, so that close() waits for its reply and give-back: a reply that came while
        // the client closed found its connections gone, and its hold stayed for a whole lease (RedLock,
        // a candidate resigned during its attempt, CI runs).
        runtime.background.run('release', lock.name, () => this.giveBackLateGrant(pending));
        if (error.why === 'aborted') throw new LockAcquireAbortedError(lock.name, signal?.reason);
      }
      // Our own errors (a backend error, a refused upgrade) pass as they are; Redis errors get wrapped.
      if (error instanceof DistributedLockError) throw error;
      throw runtime.roundTrips.failure('lock', lock.name, error);
    }
  }

  /**
   * An attempt given up on may be granted after all, with a token. A kind that counts holds gets that one
   * hold back, in that grant's lifetime only (if a later attempt of this acquisition was granted too,
   * Redis counted both; if the late grant's lease ran out and a later attempt began a new lifetime, it
   * is gone already and the new one is not touched). A kind that keeps one lease per owner (a
   * semaphore's acquisition) gives it back only if this acquisition ends without the lock: a later
   * attempt that found the owner holding it took that very lease, and giving it back then would leave
   * the caller holding what Redis has given away.
   *
   * A late attempt that re-entered a hold (`holds` > 1) it did not hold here ran after a release had
   * granted the lock to this caller (the acquire script re-enters a hold drawn after the attempt was
   * sent, and clears `granted`): the give-back of its one hold, the withdrawal and a give-back of the
   * grant all leave the grant's hold. If the acquisition ends without the lock and this owner holds
   * nothing here, the whole hold goes, in that lifetime (a resigned leader-election candidate left the
   * leadership held for a whole lease after every client had closed: CI runs, GLIDE and RedLock).
   */
  private async giveBackLateGrant(pending: Promise<AttemptResult>): Promise<void> {
    const late = await pending.catch(() => undefined); // a failed attempt granted nothing
    if (!late?.acquired) return;
    const { runtime, lock } = this;
    const { token, holds } = late;
    const release = (all: boolean) => runtime.roundTrips.bounded(lock.release(this.owner, all, undefined, token));
    if (lock.countsHolds) await release(false);
    if (await this.ended) return;
    if (!lock.countsHolds) await release(false);
    else if (holds > 1 && runtime.held.acquisitionsInFlight(this.key) === 0 && !runtime.held.find(this.key)?.active) await release(true);
  }

  /**
   * Registers a grant. The holds Redis reports must be what this owner knows it holds, plus this one;
   * more means an earlier grant's reply was lost, leaving a phantom hold nobody would release: it is
   * corrected (owner-checked) before the handle is returned. Owner ids never leave this process, so
   * the local registry is the truth about what the application holds.
   */
  private acquired(result: Acquired, startedAt: number): HeldLockHandle | Promise<HeldLockHandle> {
    const { runtime, lock } = this;
    const held = runtime.held.find(this.key);
    const expected = held?.active && held.token === result.token ? held.holds + 1 : 1;
    if (result.holds > expected && runtime.held.acquisitionsInFlight(this.key) <= 1) {
      // Bounded by the answer's deadline too. Whether or not the correction is done by then, the owner
      // holds what it knows (`expected`): its last unlock, as it knows it, then drops every hold Redis
      // counts (see ReleaseProtocol.release), the phantom with them. Registering Redis's count instead
      // made that unlock drop one hold and leave the phantom held after it succeeded.
      const adjusted = runtime.roundTrips.bounded(lock.adjustHolds(this.owner, expected)).then(() => true);
      return settleWithin(this.clock, adjusted, this.answerBy - this.clock.now(), () => false).then(
        () => this.register(result, expected, startedAt),
        (error: unknown) => {
          runtime.background.report('release', lock.name, error);
          return this.register(result, expected, startedAt);
        },
      );
    }
    return this.register(result, result.holds, startedAt);
  }

  private register(result: Acquired, holds: number, startedAt: number): HeldLockHandle {
    const { runtime, lock } = this;
    const handle = runtime.register({
      resource: lock,
      owner: this.who,
      key: this.key,
      token: result.token,
      holds,
      leaseMs: this.leaseMs,
      validityMs: result.validityMs ?? this.leaseMs,
      startedAt,
      watchdog: this.watchdog,
      replicaAck: this.replicaAck,
    });
    if (runtime.events.listenerCount('acquired') > 0) {
      runtime.events.emit('acquired', { name: lock.name, kind: lock.kind, waitedMs: this.waited(), reentrant: holds > 1, token: result.token });
    }
    return handle;
  }

  private timedOut(ttl: number): { ttl: number } {
    this.runtime.events.emit('failed', { name: this.lock.name, kind: this.lock.kind, outcome: 'timeout', waitedMs: this.waited() });
    return { ttl };
  }

  private waited(): number {
    return this.clock.now() - this.calledAt;
  }

  /** Whether a release in this process may hand this lock straight to this acquisition. */
  private handsOverToMe(): boolean {
    return this.lock.handover !== undefined && !this.replicaAck;
  }

  /**
   * The acquisition ended without the lock. If no other acquisition of this owner is in flight: a
   * hold Redis may have granted it with a lost reply is a phantom (released, so that it does not
   * block others for a whole lease), and the kind drops what the attempts left behind. And if it was
   * the last caller of this process willing to wait (even on its first attempt, which marked the
   * process as waiting), the process withdraws: its mark goes and a grant to it is passed on.
   */
  private async leaveNothingBehind(): Promise<void> {
    const { runtime, lock } = this;
    if (runtime.held.acquisitionsInFlight(this.key) === 0) {
      if (this.uncertain && !runtime.held.find(this.key)?.active) runtime.releases.releaseFor(lock, this.owner);
      if (this.willWait && lock.abandon) {
        await this.abandonedAttemptRan();
        await lock.abandon(this.owner).catch((error: unknown) => runtime.background.report('release', lock.name, error));
      }
    }
    if (this.willWait && runtime.lines.count(lock.channel) === 0) this.withdraw();
  }

  /**
   * Resolves once the last attempt given up on has run in Redis (or failed, or had no reply within the
   * operation timeout). Clean-up of what attempts leave behind (a waiting mark, a queue entry) waits for
   * it: it is not always ahead on the connection, because a script Redis had not cached (after a
   * restart, a failover) is sent again, as EVAL, after its NOSCRIPT reply, behind what was sent since.
   */
  private async abandonedAttemptRan(): Promise<void> {
    if (this.abandoned) await this.runtime.roundTrips.bounded(this.abandoned).catch(() => undefined);
  }

  /** Withdraws this process from the lock's waiting processes, in the background; best effort. */
  private withdraw(): void {
    const { runtime, lock } = this;
    const handover = lock.handover;
    if (!handover) return;
    runtime.background.run('unmark', lock.name, async () => {
      await this.abandonedAttemptRan(); // it may mark this process
      await handover.withdraw(this.owner);
    });
  }
}
