import { LockLostError, type LockLostReason } from '../errors/lock-lost.error.js';
import type { LockEvents } from '../events/lock-events.js';
import type { Clock } from '../util/clock.js';
import { afterTimeout } from '../util/late-timer.js';
import type { BackgroundWork } from './background-work.js';
import type { HeldLock, HeldLocks } from './held-locks.js';
import type { HoldTimes } from './hold-times.js';
import { LeaseWatchdog } from './lease-watchdog.js';
import type { RoundTrips } from './round-trips.js';

/**
 * How far a process's clock may run from the Redis server's, as a rate: 0.1 % (1000 ppm). NTP slews a
 * clock by at most 500 ppm, so two disciplined clocks stay within it; a clock that drifts more breaks
 * the leases of every Redis lock (Redis expires keys on its own clock).
 */
export const MAX_CLOCK_DRIFT = 0.001;
/** Redis reads its clock to the millisecond (scripts, key expiry): a lease may end up to 1 ms early there. */
const SERVER_CLOCK_STEP_MS = 1;

/** What a LeaseKeeper works with (the engine builds it). */
export interface LeaseKeeperParts {
  readonly watchdogTimeoutMs: number;
  readonly roundTrips: RoundTrips;
  readonly background: BackgroundWork;
  readonly events: LockEvents;
  /** The registry of held locks: a hold that ends leaves it; an acquisition in flight keeps a lease found over from being freed. */
  readonly registry: HeldLocks;
  /** Hold durations by lock name (for when to retry a busy lock): each release to zero holds records one. */
  readonly holdTimes: HoldTimes;
}

/**
 * Keeps the leases of the locks this process holds, and ends them: a deadline timer per lock
 * (monotonic, counted from the start of the round trip that granted or renewed it, so never later
 * than Redis's own expiry), the watchdog's renewals for locks taken without leaseTime, the check made
 * when a handle is read, and the two ends of a hold: released to zero holds (`released`), or lost
 * (`lose`: a lease that ran out, a renewal or release that found the lock gone, a force unlock, close),
 * each leaving the registry and told as an event.
 */
export class LeaseKeeper {
  private readonly watchdog: LeaseWatchdog;
  private readonly clock: Clock;
  private readonly roundTrips: RoundTrips;
  private readonly background: BackgroundWork;
  private readonly events: LockEvents;
  private readonly registry: HeldLocks;
  private readonly holdTimes: HoldTimes;

  constructor(parts: LeaseKeeperParts) {
    ({ roundTrips: this.roundTrips, background: this.background, events: this.events, registry: this.registry, holdTimes: this.holdTimes } = parts);
    this.clock = this.roundTrips.clock;
    this.watchdog = new LeaseWatchdog(this.clock, Math.floor(parts.watchdogTimeoutMs / 3), (held) => this.renew(held));
  }

  /** The lock is gone for its holder: stop keeping it, abort its signal, tell listeners (`lost`). */
  lose(held: HeldLock, reason: LockLostReason): void {
    if (!held.active) return;
    this.forget(held);
    held.abort(new LockLostError(held.resource.name, reason));
    const heldMs = this.clock.now() - held.acquiredAt;
    this.events.emit('lost', { name: held.resource.name, kind: held.resource.kind, reason, heldMs, token: held.token });
  }

  /**
   * A release's reply: `remaining` holds left in Redis. The owner keeps never more than it held less the
   * one released, and at zero the lock is gone for it (`released`): owner ids never leave this process,
   * so a hold Redis counts beyond that is a phantom (which the owner's last unlock, as it knows it,
   * drops: RedLock, one master counted a failed attempt's late grant, and the last unlock dropped one
   * hold only; simulator seed 19203) or an acquisition in flight's, which counts itself when it registers.
   */
  released(held: HeldLock, remaining: number): void {
    held.holds = Math.min(remaining, held.holds - 1);
    if (held.holds !== 0) return;
    this.forget(held);
    const heldMs = this.clock.now() - held.acquiredAt;
    this.holdTimes.record(held.resource.name, heldMs);
    if (this.events.listenerCount('released') > 0)
      this.events.emit('released', { name: held.resource.name, kind: held.resource.kind, heldMs, token: held.token });
  }

  private forget(held: HeldLock): void {
    held.active = false;
    this.stopKeeping(held);
    this.registry.remove(held);
  }

  /**
   * The part of `validityMs` (a lease granted or renewed, counted from the start of its round trip) this
   * process may count on, so that its deadline is never later than Redis's: less the server's clock
   * step, and shortened by the largest drift of this process's clock against the server's
   * (MAX_CLOCK_DRIFT): a clock that runs slow would count the full lease past its end in Redis.
   */
  validity(validityMs: number): number {
    return Math.max(0, (validityMs - SERVER_CLOCK_STEP_MS) * (1 - MAX_CLOCK_DRIFT));
  }

  /** Locks the watchdog renews right now. */
  get renewing(): number {
    return this.watchdog.size;
  }

  /** Starts keeping a lock just registered: its deadline, and its renewals if the watchdog renews it. */
  keep(held: HeldLock): void {
    if (held.watchdog) this.watchdog.add(held);
    this.armExpiry(held);
  }

  /** A reentrant grant may lengthen the lease or hand it to the watchdog. */
  extend(held: HeldLock, validUntil: number, watchdog: boolean): void {
    if (watchdog && !held.watchdog) {
      held.watchdog = true;
      this.watchdog.add(held);
    }
    if (validUntil > held.validUntil) {
      held.validUntil = validUntil;
      this.armExpiry(held);
    }
  }

  /** Stops renewing `held` for a while (its release is being retried), or for good. */
  pauseRenewals(held: HeldLock): void {
    if (held.watchdog) this.watchdog.delete(held);
  }

  resumeRenewals(held: HeldLock): void {
    if (held.active && held.watchdog) this.watchdog.add(held);
  }

  /** Stops keeping `held`: no deadline check, no renewal. */
  stopKeeping(held: HeldLock): void {
    held.cancelExpiry?.();
    held.cancelExpiry = undefined;
    this.pauseRenewals(held);
  }

  /** Stops the watchdog (the client is closing). */
  stop(): void {
    this.watchdog.stop();
  }

  /**
   * Whether `held` is valid at this instant (see LockHandle): a lease found over, with no renewal in
   * flight that could still lengthen it, is lost on the spot, so a process resumed after a pause
   * learns it before the deadline timer has had its turn.
   */
  verify(held: HeldLock): boolean {
    if (!held.active) return false;
    const now = this.clock.now();
    if (now < held.validUntil) return true;
    if (held.expiredAt(now)) this.leaseOver(held);
    return false;
  }

  /**
   * The deadline timer fires in the timers phase, before the I/O callbacks of the same loop turn and
   * before timers due later: after a pause, the signal aborts before code waiting on a later timer or
   * on a reply runs on. Only when a renewal still in flight could have lengthened the lease is the
   * verdict left to that renewal: its end decides (see renew), or, if it hangs, the moment it could no
   * longer reach past the deadline.
   */
  private armExpiry(held: HeldLock): void {
    held.cancelExpiry?.();
    held.cancelExpiry = this.clock.setTimer(held.validUntil - this.clock.now(), () => this.onLeaseDeadline(held));
  }

  private onLeaseDeadline(held: HeldLock): void {
    held.cancelExpiry = undefined;
    if (!held.active) return;
    const now = this.clock.now();
    if (now < held.validUntil) this.armExpiry(held);
    else if (held.expiredAt(now)) this.leaseOver(held);
    else held.cancelExpiry = afterTimeout(this.clock, held.renewingSince! + held.leaseMs - now, () => this.onLeaseDeadline(held));
  }

  /** The lease ran out: lost for the holder; free the key if it is still ours for a moment. */
  private leaseOver(held: HeldLock): void {
    this.lose(held, 'lease-expired');
    // Our deadline is never later than Redis's: if the key is still ours for a moment, free it now
    // so that waiters do not sit out the rest of the lease.
    this.free(held);
  }

  /**
   * A release left no hold where this owner counted more (RedLock: no majority of the masters holds it
   * any more): the holds left are lost, and what a master may still hold of them is freed, not left for
   * its lease (a process that closed left its hold on two masters: simulator seed 55563).
   */
  lostUnderRelease(held: HeldLock): void {
    this.lose(held, 'not-owner');
    this.free(held);
  }

  /**
   * Frees what Redis may still hold of `held`, in the background: owner- and token-checked, so harmless
   * otherwise; except while the same owner acquires the same lock again (a re-entry in flight): Redis
   * may have run it already, lengthening the lease, and that acquisition will hold what this would free.
   */
  private free(held: HeldLock): void {
    if (this.registry.acquisitionsInFlight(held.key) > 0) return;
    this.background.run('release', held.resource.name, () => this.roundTrips.bounded(held.resource.release(held.owner, true, undefined, held.token)));
  }

  /**
   * The claim of permits a release granted to this process's waiter in its script, held from the
   * grant's message with the grant's short lease (see Acquisition): one renewal, now, that gives the hold
   * its owner's lease, counted from the claim's start. In flight, it counts as a renewal (the short lease
   * is not declared over while its reply may still lengthen it); refused (the grant's lease ended
   * first), the permits are lost; without a reply, the grant's own lease decides, cut to the claim's
   * start plus the owner's lease (the claim may have run, and shortened it in Redis: see renew).
   */
  claim(held: HeldLock): void {
    void this.renew(held);
  }

  /**
   * One watchdog renewal of one lock, bounded by the operation timeout, so that a stalled node (a
   * master failing over) holds up only the locks it serves: the watchdog skips a lock whose renewal
   * is still in flight, and renews the others on time.
   */
  private async renew(held: HeldLock): Promise<void> {
    const startedAt = this.clock.now();
    held.renewingSince = startedAt;
    // Run in Redis at any moment from now on, it sets the lease's end there to its run time plus the
    // lease: no more than that can be counted on meanwhile, nor after it without a reply (a grant claimed
    // with a lease shorter than what was left of the grant's, its reply stalled: found by the simulator).
    const bound = startedAt + this.validity(held.leaseMs);
    if (bound < held.validUntil) {
      held.validUntil = bound;
      this.armExpiry(held);
    }
    try {
      const result = await this.roundTrips.bounded(held.resource.renew(held.owner, held.leaseMs, held.replicaAck));
      if (!held.active) return;
      if (!result.renewed) {
        // Lost: stop now. Unconfirmed: keep the old deadline; the next round may confirm.
        if (result.lost) this.lose(held, 'not-owner');
        return;
      }
      // A renewal sets the lease's end in Redis (its run time plus the lease), replacing the one before:
      // the local deadline follows it, earlier too (a grant claimed with a lease shorter than what was
      // left of the grant's). Counted from the start of the round trip, it is never later than Redis's.
      held.validUntil = startedAt + this.validity(result.validityMs);
      this.armExpiry(held);
      this.events.emit('renewed', { name: held.resource.name, kind: held.resource.kind, leaseMs: held.leaseMs, tookMs: this.clock.now() - startedAt });
    } catch (error) {
      this.background.report('renew', held.resource.name, error);
    } finally {
      if (held.renewingSince === startedAt) {
        held.renewingSince = undefined;
        // Its deadline passed while this renewal was in flight, which did not lengthen it: over now.
        if (held.active && this.clock.now() >= held.validUntil) {
          held.cancelExpiry?.();
          this.onLeaseDeadline(held);
        }
      }
    }
  }
}
