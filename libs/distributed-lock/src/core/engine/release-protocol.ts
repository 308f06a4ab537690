import type { LockEvents } from '../events/lock-events.js';
import { LockNotHeldError } from '../errors/lock-not-held.error.js';
import type { ReleaseReply } from '../scripts/lock-script.js';
import { pause, settleWithin } from '../util/late-timer.js';
import type { LockLines } from '../waiting/lock-lines.js';
import type { Succession } from '../waiting/lock-line.js';
import type { BackgroundWork } from './background-work.js';
import { registryKey, type HeldLock, type HeldLocks, type RegistryKey } from './held-locks.js';
import type { HandoverReply, LeaseResource } from './lease-resource.js';
import type { LeaseKeeper } from './lease-keeper.js';
import type { RoundTrips } from './round-trips.js';

/**
 * Releasing a lock: one hold at a time, owner-checked in Redis. When a caller of this process waits
 * for the same lock, the last hold goes to it in the same script (a hand-over: no publish, nobody
 * woken, no race); when Redis does not answer, the release is retried in the background until its
 * outcome is known, so the lock does not sit in Redis for the rest of its lease.
 */
export class ReleaseProtocol {
  private closed = false;
  /** Give-backs under way (releaseFor), by owner and lock. */
  private readonly givingBack = new Map<RegistryKey, Promise<void>>();

  /** `keeper` ends the holds a release drops to zero or finds lost; `lines` name the waiter a release hands over to. */
  constructor(
    private readonly roundTrips: RoundTrips,
    private readonly background: BackgroundWork,
    private readonly lines: LockLines,
    private readonly keeper: LeaseKeeper,
    private readonly registry: HeldLocks,
    private readonly events: LockEvents,
  ) {}

  /** The client is closing: no more hand-overs, and retried releases stop (close releases what is held). */
  close(): void {
    this.closed = true;
  }

  /**
   * Drops one hold of `held` in Redis. LockNotHeldError if it is no longer ours.
   *
   * The owner's last hold, as this process knows it, drops every hold Redis counts for the owner,
   * unless another acquisition of the same owner and lock is in flight (its hold may be counted already,
   * and is real). Owner ids never leave this process, so what it knows is the truth: a hold beyond it is
   * a phantom (an attempt its caller gave up on that Redis granted all the same) and must not outlive a
   * successful unlock.
   */
  async release(held: HeldLock): Promise<void> {
    const name = held.resource.name;
    if (held.releasing) await held.releasing;
    if (!held.active) {
      throw new LockNotHeldError(name, held.lostBecause ? `it was lost before (${held.lostBecause.reason})` : 'it was already released');
    }
    const expected = held.holds;
    const { resource } = held;
    const acquiring = this.registry.acquisitionsInFlight(held.key) > 0;
    const last = expected === 1 && !acquiring;
    if (last) held.leaving = true;
    if (expected === 1 && resource.handover && !held.replicaAck && !this.closed) {
      const successor = this.lines.nextHandover(resource.channel, held.acquiredAt);
      if (successor) return this.releaseTo(held, successor, last);
    }
    // A release of one hold of several names the holds it expects, as its retries do: sent again by the
    // client after a reconnect (ioredis resends what was not answered) once it had run, it finds one
    // fewer and does nothing twice (it dropped the outer hold of a re-entry: found by the simulator).
    // Not while the same owner acquires the lock again: that acquisition's hold may be counted already.
    const guard = !last && !acquiring ? expected : undefined;
    let reply: ReleaseReply;
    try {
      reply = await this.roundTrips.bounded(resource.release(held.owner, last, guard, held.token));
    } catch (error) {
      // Unknown outcome (the master died mid-call, a failover...). Retry until it is known, so the
      // lock does not sit in Redis for the rest of its lease, or block its owner's next acquisition.
      this.retry(held, expected);
      throw this.roundTrips.failure('unlock', name, error);
    }
    this.applyReply(held, reply, expected);
  }

  /**
   * Releases every hold `owner` may have on `resource` (owner-checked, so harmless if it has none), in
   * the background: for grants nobody is left to use.
   */
  releaseFor(resource: LeaseResource, owner: string): void {
    const key = registryKey(owner, resource);
    const done = this.background.run('release', resource.name, () => this.roundTrips.bounded(resource.release(owner, true)));
    this.givingBack.set(key, done);
    void done.then(() => {
      if (this.givingBack.get(key) === done) this.givingBack.delete(key);
    });
  }

  /** Whether a release of the owner and lock `key` names is still under way (see settled). */
  unsettled(key: RegistryKey): boolean {
    return this.givingBack.has(key) || this.registry.find(key)?.releasing !== undefined;
  }

  /**
   * Waits for a retried release of the owner and lock `key` names, and for a give-back of its (releaseFor),
   * to settle, so that the owner's next attempt does not run before them (a give-back resent after a
   * NOSCRIPT, or after a reconnect, would drop the hold that attempt takes: found by the simulator), nor
   * re-enter a lock whose last release may or may not have happened. False if `deadline` came first.
   */
  async settled(key: RegistryKey, deadline: number): Promise<boolean> {
    const releasing = this.registry.find(key)?.releasing;
    const givingBack = this.givingBack.get(key);
    const pending = releasing && givingBack ? Promise.all([releasing, givingBack]) : (releasing ?? givingBack);
    if (!pending) return true;
    if (!Number.isFinite(deadline)) {
      await pending;
      return true;
    }
    return settleWithin(
      this.roundTrips.clock,
      pending.then(() => true),
      deadline - this.roundTrips.clock.now(),
      () => false,
    );
  }

  /**
   * Releases `held` by handing it to `successor`, a waiter of this process, in the same round trip.
   * The successor's lease counts from the start of this call (Redis granted it later, so the local
   * deadline is never the later one). A successor that stopped waiting meanwhile gives the lock back.
   */
  private async releaseTo(held: HeldLock, successor: Succession, all: boolean): Promise<void> {
    const { resource } = held;
    const { terms } = successor;
    const startedAt = this.roundTrips.clock.now();
    let reply: HandoverReply;
    try {
      reply = await this.roundTrips.bounded(
        resource.handover!.releaseTo({
          owner: held.owner,
          successor: terms.owner,
          leaseMs: terms.leaseMs,
          successorWatchdog: terms.watchdog === true,
          yieldToOthers: successor.yieldToOthers,
          nextWaiter: successor.next,
          all,
        }),
      );
    } catch (error) {
      // Unknown outcome: the successor looks for itself (if it was granted, its attempt finds it
      // holding the lock and the extra hold is corrected; if it ends without the lock, whatever is
      // held in its name is released); our release is retried as usual.
      if (!successor.settle({ granted: false, uncertain: true })) this.releaseFor(resource, terms.owner);
      successor.wake();
      this.retry(held, 1);
      throw this.roundTrips.failure('unlock', resource.name, error);
    }
    switch (reply.outcome) {
      case 'handed-over':
        this.handedOver(held, 'local');
        this.keeper.released(held, 0);
        if (!successor.settle({ granted: true, token: reply.token, startedAt })) this.releaseFor(resource, terms.owner);
        successor.wake();
        return;
      case 'yielded':
        // Acquired to the process that has waited longest; ours are queued behind it in Redis and will
        // be told (grant or release) when it is their turn, so the successor sleeps on.
        successor.settle({ granted: false });
        successor.forget();
        this.handedOver(held, 'process');
        this.keeper.released(held, 0);
        return;
      case 'held':
        successor.settle({ granted: false });
        successor.wake();
        this.applyReply(held, { outcome: 'released', remaining: reply.remaining, toAnotherProcess: false }, 1);
        return;
      case 'not-owner':
        successor.settle({ granted: false });
        successor.wake();
        this.applyReply(held, reply, 1);
    }
  }

  /** The release gave the lock to a waiter: a caller of this process, or another waiting process (the `handover` event). */
  private handedOver(held: HeldLock, to: 'local' | 'process'): void {
    // Only when someone listens (the metrics): no allocation per hand-over otherwise.
    if (this.events.listenerCount('handover') > 0) this.events.emit('handover', { name: held.resource.name, kind: held.resource.kind, to });
  }

  /** A release's reply: the holds left (0: gone for this owner), or not the owner any more (LockNotHeldError). */
  private applyReply(held: HeldLock, reply: ReleaseReply, expected: number): void {
    if (reply.outcome === 'already-applied') return this.keeper.released(held, expected - 1); // sent twice: it ran
    if (reply.outcome !== 'released') {
      this.keeper.lose(held, 'not-owner');
      throw new LockNotHeldError(held.resource.name, 'its lease ran out or it was force-unlocked, so another owner may hold it now');
    }
    if (reply.toAnotherProcess) this.handedOver(held, 'process');
    // One hold released and none left where this process counts more: the others were lost under it
    // (RedLock: the masters that answered had lost or never had the re-entry), and are said so.
    if (reply.remaining === 0 && held.holds > 1) return this.keeper.lostUnderRelease(held);
    this.keeper.released(held, reply.remaining);
  }

  /**
   * Retries a release whose outcome is unknown, with back-off, until it is known or the lease is over
   * (then the key expires by itself, and the hold is lost). Each retry expects the holds as they were before the lost
   * release, so a release that did go through is not applied twice.
   */
  private retry(held: HeldLock, expected: number): void {
    this.keeper.pauseRenewals(held);
    held.releasing = (async () => {
      for (let attempt = 0; held.active && !this.closed && this.roundTrips.clock.now() < held.validUntil; attempt++) {
        await pause(this.roundTrips.clock, Math.min(100 * 2 ** attempt, 1000));
        if (!held.active || this.closed) return;
        let reply: ReleaseReply;
        try {
          reply = await this.roundTrips.bounded(held.resource.release(held.owner, false, expected, held.token));
        } catch (error) {
          this.background.report('release', held.resource.name, error);
          continue;
        }
        // Not the owner: gone. If the lost release was of the last hold, that is what it did (or the lease
        // ran out meanwhile); if holds were to remain, the lock was lost under them, and is said so.
        // Already applied: that release did go through. Released: this one did it (and may have granted
        // it to another process).
        // (Released to none of several holds: as in applyReply, the others were lost under it.)
        const left = reply.outcome === 'not-owner' ? 0 : reply.outcome === 'already-applied' ? expected - 1 : reply.remaining;
        if (left === 0 && expected > 1) return this.keeper.lostUnderRelease(held);
        if (reply.outcome === 'released' && reply.toAnotherProcess) this.handedOver(held, 'process');
        this.keeper.released(held, left);
        this.keeper.resumeRenewals(held);
        return;
      }
      // The lease ran out with the outcome still unknown: whatever Redis did, it is not held any more,
      // and its holder (the owner's other handles, a re-entry's outer hold) must be told.
      if (held.active) this.keeper.lose(held, 'lease-expired');
    })().finally(() => {
      held.releasing = undefined;
    });
  }
}
