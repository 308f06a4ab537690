import { EventEmitter } from 'node:events';
import type { PubSubChoice } from './pubsub-choice.js';
import type { LockLostReason } from '../errors/lock-lost.error.js';

/**
 * Kinds of lock the library offers: the plain reentrant lock, the fair lock, the two halves of a
 * read-write lock, and the semaphore (each acquisition of permits is one lease, with these events).
 * (A multi-lock is made of locks of these kinds; their events carry their own kind. A leadership is a
 * plain lock: 'reentrant'.)
 */
export type LockKind = 'reentrant' | 'fair' | 'read' | 'write' | 'semaphore';

interface LockEventBase {
  name: string;
  kind: LockKind;
}

export interface LockAcquiredEvent extends LockEventBase {
  /** Milliseconds from the call to the grant (0 for an immediate grant). */
  waitedMs: number;
  /** True when the owner already held it (reentrant acquisition). */
  reentrant: boolean;
  /** The fencing token of this hold (not a secret: it cannot release or renew the lock). */
  token: number;
}
export interface LockReleasedEvent extends LockEventBase {
  /** Milliseconds from the first acquisition to the final release. */
  heldMs: number;
  token: number;
}
export interface LockRenewedEvent extends LockEventBase {
  leaseMs: number;
  /** Milliseconds the renewal round trip took; over a third of leaseMs leaves little margin. */
  tookMs: number;
}
export interface LockWaitedEvent extends LockEventBase {
  /** Milliseconds from the call to the grant of an acquisition whose first attempt found the lock taken. */
  waitedMs: number;
}
export interface LockLostEvent extends LockEventBase {
  reason: LockLostReason;
  heldMs: number;
  /** The token of the lost hold: writes fenced with it may now be refused. */
  token: number;
}
/**
 * A release gave the lock straight to a waiter: `local`, a caller of this process (one script, no
 * wake-up); `process`, the process that has waited longest (a grant, see docs/concepts/waiting-and-handover.md).
 */
export interface LockHandoverEvent extends LockEventBase {
  to: 'local' | 'process';
}
export interface LockFailedEvent extends LockEventBase {
  /** `timeout`: still held by another owner after waitTime; `error`: Redis failed; `aborted`: caller gave up. */
  outcome: 'timeout' | 'error' | 'aborted';
  waitedMs: number;
  error?: Error;
}
export interface LockBackgroundErrorEvent {
  /**
   * What the library was doing in the background when Redis failed (`register`: this process's
   * label for inspection; `elect`: a leader election's campaign, or its onElected / onRevoked
   * callback, failed; `close`: close() gave up on work Redis did not answer in time, once per close).
   */
  operation: 'renew' | 'release' | 'unmark' | 'subscribe' | 'unsubscribe' | 'connection' | 'register' | 'elect' | 'close';
  name?: string;
  error: Error;
}

/**
 * A Redis node's circuit breaker changed state (see LockClientOptions.circuitBreaker): `open` after
 * `failures` calls in a row got no reply (calls to the node are refused at once from then on),
 * `half-open` while one probe asks the node, `closed` once it answers (calls are sent again).
 */
export interface LockCircuitEvent {
  /** The node (host:port, or the client given; no credentials), as in LockClient.target. */
  node: string;
  state: 'closed' | 'open' | 'half-open';
  /** Failures in a row when it opened. */
  failures: number;
  /** What opened it, or why the probe failed. */
  error?: Error;
}

/**
 * Events of a lock client. None carries an owner id (what releases a lock); acquired, released and
 * lost carry the fencing token, which proves nothing to Redis and is what a fenced write needs.
 */
export interface LockEventMap {
  acquired: [LockAcquiredEvent];
  /** An acquisition found the lock taken and waited for it (emitted at the grant, before `acquired`). */
  waited: [LockWaitedEvent];
  released: [LockReleasedEvent];
  renewed: [LockRenewedEvent];
  lost: [LockLostEvent];
  failed: [LockFailedEvent];
  'background-error': [LockBackgroundErrorEvent];
  /** A release handed the lock over (see LockHandoverEvent); emitted only when someone listens. */
  handover: [LockHandoverEvent];
  /** A channel was (un)subscribed: waiting started or ended for a lock in this process. */
  subscription: [{ channel: string; subscribed: boolean }];
  /**
   * Which pub/sub unlock notifications use (sharded needs a Redis 7+ cluster), once: at connect(), or
   * with lazyConnect at the first lock call.
   */
  pubsub: [PubSubChoice];
  /** A node's circuit breaker opened, went half-open (a probe), or closed (see LockCircuitEvent). */
  circuit: [LockCircuitEvent];
}

export class LockEvents extends EventEmitter<LockEventMap> {}
