import { InvalidLockArgumentError, type Duration } from '../core/index.js';
import { describe, isPlainObject, permitCount, queueTimeoutMs } from '../core/internal.js';
import { lockDecorator } from './distributed-lock.decorator.js';
import {
  toLockMetadata,
  type LockedMethodDecorator,
  type LockNameFactory,
  type LockNameFromArgs,
  type OnBusy,
  type OnLost,
} from './distributed-lock.options.js';

interface CommonSemaphoreOptions {
  /** The semaphore's size, in permits: stored in Redis at its first use if none is stored yet (then Redis's value counts). */
  size: number;
  /** Permits each call takes (default 1). */
  permitsPerCall?: number;
  /** Lease of each call's permits; omit it to let the watchdog renew them while the method runs. */
  leaseTime?: Duration;
  /** How long to wait for permits (default: module defaultWaitTime, 10 s). */
  waitTime?: Duration;
  /** What to do when no permits came free within waitTime (default `'throw'`: 423 + Retry-After over HTTP). */
  onBusy?: OnBusy;
  /** What to do when the permits' lease is lost while the method runs (default `'abort'`); see OnLost. */
  onLost?: OnLost;
  /** Keep the permits at least this long after the call started (see @DistributedLock). */
  lockAtLeastFor?: Duration;
  /** How long a waiter's place in line survives without a refresh (default 5 s). */
  queueTimeout?: Duration;
}

export interface DistributedSemaphoreOptions extends CommonSemaphoreOptions {
  /** Semaphore name: a literal, a template over the request or the arguments, or a function of the ExecutionContext (as @DistributedLock's name; one name). */
  name: string | LockNameFactory;
  nameFromArgs?: never;
}

export interface DistributedSemaphoreArgsOptions<A extends unknown[]> extends CommonSemaphoreOptions {
  /** Semaphore name from the method's arguments, typed by them. */
  nameFromArgs: (...args: A) => string;
  name?: never;
}

/**
 * Runs the decorated method holding permits of a distributed semaphore: at most `size` calls (or
 * `size / permitsPerCall`) run at once across every instance, on request handlers and on methods of
 * any provider. It is @DistributedLock with permits instead of a lock: the same name templates, the
 * same one acquisition path (the method wrapper, the runner), `onBusy`, 423 + Retry-After when no
 * permits came free within waitTime, `onLost`, shutdown and tracing. `@CurrentLock()` gets the PermitsHandle
 * (token, signal, permits). Calls are served in arrival order across instances. Not reentrant: a
 * decorated call that calls another on the same semaphore takes more permits (with one permit, it
 * waits for itself until waitTime).
 *
 * ```ts
 * @DistributedSemaphore({ name: 'exports:{params.tenant}', size: 3, waitTime: '2s' })
 * @DistributedSemaphore({ nameFromArgs: (region: string) => `crawl:${region}`, size: 5, onBusy: 'skip' })
 * ```
 */
export function DistributedSemaphore(options: DistributedSemaphoreOptions): MethodDecorator;
export function DistributedSemaphore<A extends unknown[]>(options: DistributedSemaphoreArgsOptions<A>): LockedMethodDecorator<A>;
export function DistributedSemaphore(options: DistributedSemaphoreOptions | DistributedSemaphoreArgsOptions<unknown[]>): MethodDecorator {
  if (!isPlainObject(options)) throw new InvalidLockArgumentError('@DistributedSemaphore options', `expected { name, size, ... }, got ${describe(options)}.`);
  const { size: sizeOption, permitsPerCall, queueTimeout, ...lockOptions } = options as unknown as Record<string, unknown>;
  if ('kind' in lockOptions) throw new InvalidLockArgumentError('@DistributedSemaphore options', 'unknown option "kind": a semaphore has no lock kind.');
  if (Array.isArray(lockOptions.name))
    throw new InvalidLockArgumentError('@DistributedSemaphore name', 'expected one name: a call takes permits of one semaphore.');
  const size = permitCount(sizeOption, '@DistributedSemaphore size', 1);
  const perCall = permitsPerCall === undefined ? 1 : permitCount(permitsPerCall, '@DistributedSemaphore permitsPerCall', 1);
  if (perCall > size) {
    throw new InvalidLockArgumentError(
      '@DistributedSemaphore permitsPerCall',
      `${perCall} is more than the semaphore's ${size} permits; no call could ever run.`,
    );
  }
  const queueMs = queueTimeoutMs(queueTimeout);
  const metadata = toLockMetadata(lockOptions as { name: string | LockNameFactory; nameFromArgs?: LockNameFromArgs }, undefined, '@DistributedSemaphore');
  return lockDecorator({ ...metadata, semaphore: { size, perCall, queueTimeoutMs: queueMs } });
}
