import type { LeaseResource } from './lease-resource.js';
import type { LockLostError } from '../errors/lock-lost.error.js';
import type { ReplicaAck } from '../config/replica-ack.js';
import type { CancelTimer, Clock } from '../util/clock.js';

/**
 * One owner's hold on one lock, as the registry files it. Computed once per acquisition (and per held
 * lock) and passed along, rather than rebuilt by every lookup on the lock path.
 */
export type RegistryKey = string & { readonly __registryKey: never };

export function registryKey(owner: string, resource: LeaseResource): RegistryKey {
  return `${owner}\u0000${resource.kind}\u0000${resource.id}` as RegistryKey;
}

/** What a grant establishes for one owner of one lock (see HeldLock). */
export interface HeldLockTerms {
  readonly resource: LeaseResource;
  readonly owner: string;
  readonly token: number;
  readonly holds: number;
  readonly leaseMs: number;
  /** Monotonic deadline of the lease, counted from the start of the round trip that granted it. */
  readonly validUntil: number;
  /** Renewed by the watchdog (no explicit leaseTime). */
  readonly watchdog: boolean;
  readonly acquiredAt: number;
  /** Replica acknowledgement the renewals of this lock require. */
  readonly replicaAck: ReplicaAck | undefined;
  /** Taken outside any lock context: by-name calls made outside a context act for it (see LockEngine.byName). */
  readonly outsideContext: boolean;
}

/**
 * What this process knows about one lock held by one owner: shared by every handle of a reentrant
 * holder. `validUntil` is a monotonic deadline counted from the start of the acquiring (or renewing)
 * round trip, so it is never later than Redis's own expiry.
 */
export class HeldLock {
  readonly resource: LeaseResource;
  readonly owner: string;
  /** Where the registry files it (owner and lock). */
  readonly key: RegistryKey;
  readonly token: number;
  readonly acquiredAt: number;
  readonly replicaAck: ReplicaAck | undefined;
  readonly outsideContext: boolean;
  holds: number;
  leaseMs: number;
  validUntil: number;
  watchdog: boolean;
  active = true;
  /** Cancels the pending lease-deadline check. */
  cancelExpiry: (() => void) | undefined;
  /** A release whose outcome is unknown is being retried; the same owner waits for it before re-acquiring. */
  releasing: Promise<void> | undefined;
  /**
   * Its owner's last release is under way: by name it no longer holds the lock (which another owner
   * may already hold, RedLock's slowest master or the grant's message having answered first).
   */
  leaving = false;
  /** Monotonic start of the renewal in flight, if any: its reply may still lengthen the lease. */
  renewingSince: number | undefined;
  private controller: AbortController | undefined;

  constructor(terms: HeldLockTerms) {
    this.resource = terms.resource;
    this.owner = terms.owner;
    this.key = registryKey(terms.owner, terms.resource);
    this.token = terms.token;
    this.acquiredAt = terms.acquiredAt;
    this.replicaAck = terms.replicaAck;
    this.outsideContext = terms.outsideContext;
    this.holds = terms.holds;
    this.leaseMs = terms.leaseMs;
    this.validUntil = terms.validUntil;
    this.watchdog = terms.watchdog;
  }

  /** Aborted when the lock is lost; created on first use, so locks nobody watches cost nothing. */
  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    return this.controller.signal;
  }

  /** Why it was lost (the signal's reason), if it was. */
  get lostBecause(): LockLostError | undefined {
    return this.controller?.signal.aborted ? (this.controller.signal.reason as LockLostError) : undefined;
  }

  /**
   * Whether the lease is over at `now` with nothing that could still lengthen it: no renewal in
   * flight, or one that started too long ago to reach past `now` even if Redis granted it.
   */
  expiredAt(now: number): boolean {
    if (now < this.validUntil) return false;
    return this.renewingSince === undefined || this.renewingSince + this.leaseMs <= now;
  }

  abort(reason: LockLostError): void {
    this.controller ??= new AbortController();
    this.controller.abort(reason);
  }
}

/**
 * The locks this process holds, by owner and lock, and the acquisitions in flight. Only bookkeeping:
 * what a lock is held for, and what happens when it ends, is the engine's (see LockEngine).
 *
 * While any acquisition is in flight the process is kept alive (Clock.keepAlive): a script whose only
 * pending work is a caller waiting for a lock (on the in-memory store, nothing else is on the event
 * loop) must get its answer, not exit with the wait unsettled. Once every acquisition has ended (or
 * the client closed, which ends them), nothing is kept.
 */
export class HeldLocks {
  private readonly byOwner = new Map<RegistryKey, HeldLock>();
  /** Acquisitions in flight per owner and lock, to tell a phantom grant from a concurrent real one. */
  private readonly inFlight = new Map<RegistryKey, number>();
  /** Acquisitions in flight in all, and what keeps the process alive meanwhile. */
  private acquiring = 0;
  private releaseKeepAlive: CancelTimer | undefined;

  constructor(private readonly clock: Clock) {}

  get size(): number {
    return this.byOwner.size;
  }

  all(): HeldLock[] {
    return [...this.byOwner.values()];
  }

  /** Locks held right now by kind (read by the held-locks gauge, not on the lock path). */
  countByKind(): Map<LeaseResource['kind'], number> {
    const counts = new Map<LeaseResource['kind'], number>();
    for (const held of this.byOwner.values()) counts.set(held.resource.kind, (counts.get(held.resource.kind) ?? 0) + 1);
    return counts;
  }

  /** The lock `key` (see registryKey) names, if its owner holds it. */
  find(key: RegistryKey): HeldLock | undefined {
    return this.byOwner.get(key);
  }

  /** Every holder of `resource` in this process (several owners only for a shared read lock). */
  holdersOf(resource: LeaseResource): HeldLock[] {
    return this.all().filter((held) => held.resource.id === resource.id && held.resource.kind === resource.kind);
  }

  /**
   * Holders of `resource` whose acquisition was made outside any lock context, but not those whose last
   * release is under way. A scan: asked only by a by-name call made outside a context, so acquisitions
   * keep no index for it.
   */
  heldOutsideContext(resource: LeaseResource): HeldLock[] {
    return this.holdersOf(resource).filter((held) => held.outsideContext && !held.leaving);
  }

  add(held: HeldLock): void {
    this.byOwner.set(held.key, held);
  }

  remove(held: HeldLock): void {
    if (this.byOwner.get(held.key) === held) this.byOwner.delete(held.key);
  }

  /** Counts an acquisition of the owner and lock `key` names as in flight until the returned function is called. */
  beginAcquisition(key: RegistryKey): () => void {
    this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
    if (this.acquiring++ === 0) this.releaseKeepAlive = this.clock.keepAlive();
    return () => {
      const left = (this.inFlight.get(key) ?? 1) - 1;
      if (left > 0) this.inFlight.set(key, left);
      else this.inFlight.delete(key);
      if (--this.acquiring === 0) {
        this.releaseKeepAlive?.();
        this.releaseKeepAlive = undefined;
      }
    };
  }

  /** Acquisitions of the owner and lock `key` names in flight right now (the caller's included, if counted). */
  acquisitionsInFlight(key: RegistryKey): number {
    return this.inFlight.get(key) ?? 0;
  }
}
