import type { ReplicaAck } from '../config/replica-ack.js';
import type { LockLostError } from '../errors/lock-lost.error.js';
import type { LeaseResource } from './lease-resource.js';
import { registryKey, type RegistryKey } from './registry-key.js';

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
