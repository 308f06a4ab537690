import type { ReplicaAck } from '../config/replica-ack.js';
import type { LockLostError } from '../errors/lock-lost.error.js';
import type { LeaseResource } from './lease-resource.js';

/**
 * What this process knows about one lock held by one owner: shared by every handle of a reentrant
 * holder. `validUntil` is a monotonic deadline counted from the start of the acquiring (or renewing)
 * round trip, so it is never later than Redis's own expiry.
 */
export class HeldLock {
  active = true;
  lostBecause: LockLostError | undefined;
  /** Cancels the pending lease-deadline check. */
  cancelExpiry: (() => void) | undefined;
  /** A release whose outcome is unknown is being retried; the same owner waits for it before re-acquiring. */
  releasing: Promise<void> | undefined;
  /** Monotonic start of the renewal in flight, if any: its reply may still lengthen the lease. */
  renewingSince: number | undefined;
  private controller: AbortController | undefined;

  constructor(
    readonly resource: LeaseResource,
    readonly owner: string,
    readonly token: number,
    public holds: number,
    public leaseMs: number,
    public validUntil: number,
    public watchdog: boolean,
    readonly acquiredAt: number,
    /** Replica acknowledgement the renewals of this lock require. */
    readonly replicaAck: ReplicaAck | undefined,
    /** Taken outside any lock context: by-name calls made outside a context act for it (see LockEngine.byName). */
    readonly outsideContext = false,
  ) {}

  /** Aborted when the lock is lost; created on first use, so locks nobody watches cost nothing. */
  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    return this.controller.signal;
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
    this.lostBecause = reason;
    this.controller ??= new AbortController();
    this.controller.abort(reason);
  }
}
