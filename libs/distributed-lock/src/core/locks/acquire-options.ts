import { InvalidLockArgumentError } from '../errors/invalid-lock-argument.error.js';
import { describe, toMilliseconds, type Duration } from '../util/duration.js';
import { assertKnownKeys, isPlainObject } from '../util/validate.js';
import { parseReplicaAck, type ReplicaAck } from '../config/replica-ack.js';
import type { ReplicaAckOptions } from '../config/lock-client-options.js';

/** Options of `lock()`: waits until acquired, unless `waitTime` bounds the wait (then it throws). */
export interface LockOptions {
  /** Lease; omit it to let the watchdog keep the lock alive while held. */
  leaseTime?: Duration;
  /** Longest wait; omit to wait as long as it takes. On timeout: LockAcquireTimeoutError. */
  waitTime?: Duration;
  /** Cancels the wait (LockAcquireAbortedError). Does not release a lock already taken. */
  signal?: AbortSignal;
  /** Replica acknowledgement for this lock (overrides the client's); `false` turns it off. */
  replicaAck?: ReplicaAckOptions | false;
}

/** Options of `tryLock()`: resolves `false` when not acquired within `waitTime` (default: no wait). */
export type TryLockOptions = LockOptions;

/** A validated acquisition request. */
export interface AcquireRequest {
  /** undefined: watchdog-renewed lease. */
  leaseMs: number | undefined;
  /** Infinity: wait as long as it takes. */
  waitMs: number;
  signal: AbortSignal | undefined;
  /** undefined: the client's setting; null: off for this lock. */
  replicaAck?: ReplicaAck | null;
}

/** Shortest explicit lease: it must outlast the round trip that takes it. */
export const MIN_LEASE_MS = 10;

const OPTION_KEYS = ['leaseTime', 'waitTime', 'signal', 'replicaAck'] as const;

export function leaseMs(value: unknown): number {
  return toMilliseconds(value, 'leaseTime', { min: MIN_LEASE_MS });
}

export function waitMs(value: unknown): number {
  return toMilliseconds(value, 'waitTime', { min: 0 });
}

/**
 * Shortest `queueTimeout` of a queue kept in Redis (the fair lock's, a semaphore's): its waiters
 * refresh their place every third of it, and a refresh must not come round faster than every 10 ms.
 */
export const MIN_QUEUE_TIMEOUT_MS = 30;

/** The `queueTimeout` option of a fair lock or a semaphore, checked: undefined when not given (the kind's default). */
export function queueTimeoutMs(value: unknown): number | undefined {
  return value === undefined ? undefined : toMilliseconds(value, 'queueTimeout', { min: MIN_QUEUE_TIMEOUT_MS });
}

function fromOptions(options: Record<string, unknown>, defaultWaitMs: number, argument: string): AcquireRequest {
  assertKnownKeys(options, OPTION_KEYS, argument);
  const signal = options.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new InvalidLockArgumentError('signal', `expected an AbortSignal, got ${describe(signal)}.`);
  }
  const request: AcquireRequest = {
    leaseMs: options.leaseTime === undefined ? undefined : leaseMs(options.leaseTime),
    waitMs: options.waitTime === undefined ? defaultWaitMs : waitMs(options.waitTime),
    signal,
  };
  if (options.replicaAck !== undefined) request.replicaAck = parseReplicaAck(options.replicaAck, 'replicaAck') ?? null;
  return request;
}

/** `lock(name)`, `lock(name, leaseTime)`, `lock(name, { leaseTime, waitTime, signal })`. */
export function lockRequest(arg: unknown): AcquireRequest {
  if (arg === undefined) return { leaseMs: undefined, waitMs: Infinity, signal: undefined };
  if (isPlainObject(arg)) return fromOptions(arg, Infinity, 'lock options');
  return { leaseMs: leaseMs(arg), waitMs: Infinity, signal: undefined };
}

/** `tryLock(name)`, `tryLock(name, waitTime, leaseTime?)`, `tryLock(name, { waitTime, leaseTime, signal })`. */
export function tryLockRequest(wait: unknown, lease: unknown): AcquireRequest {
  if (isPlainObject(wait)) {
    if (lease !== undefined) {
      throw new InvalidLockArgumentError('leaseTime', 'give it inside the options object, not as a third argument.');
    }
    return fromOptions(wait, 0, 'tryLock options');
  }
  return {
    waitMs: wait === undefined ? 0 : waitMs(wait),
    leaseMs: lease === undefined ? undefined : leaseMs(lease),
    signal: undefined,
  };
}
