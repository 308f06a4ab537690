import type { LockRuntime } from '../engine/lock-runtime.js';
import { InvalidLockArgumentError } from '../errors/invalid-lock-argument.error.js';
import { UnsupportedLockOperationError } from '../errors/unsupported-lock-operation.error.js';
import { describe, type Duration } from '../util/duration.js';
import { assertKnownKeys, assertLockName, isPlainObject } from '../util/validate.js';
import { queueTimeoutMs } from './acquire-options.js';
import { BaseLock } from './base-lock.js';
import { FairLock } from './fair/fair-lock.js';
import { MultiLock } from './multi/multi-lock.js';
import { ReadWriteLock } from './read-write/read-write-lock.js';

/** Options of `getFairLock`. */
export interface FairLockOptions {
  /**
   * How long a queued waiter's place survives without a refresh (default 5 s; waiters refresh every
   * third of it): the longest a crashed waiter can hold up the ones behind it.
   */
  queueTimeout?: Duration;
}

// The lock objects of LockClient's getters other than getLock, with their arguments checked before
// any Redis call (InvalidLockArgumentError), and the kinds that redlock mode cannot offer refused.

/** LockClient.getFairLock. */
export function createFairLock(runtime: LockRuntime, mode: string, name: string, options: FairLockOptions): FairLock {
  assertLockName(name);
  if (!isPlainObject(options)) throw new InvalidLockArgumentError('fair lock options', `expected an object, got ${describe(options)}.`);
  assertKnownKeys(options, ['queueTimeout'], 'fair lock options');
  const queueTimeout = queueTimeoutMs(options.queueTimeout);
  assertSingleNode(mode, name, 'use a fair lock');
  return new FairLock(runtime, name, queueTimeout);
}

/** LockClient.getReadWriteLock. */
export function createReadWriteLock(runtime: LockRuntime, mode: string, name: string): ReadWriteLock {
  assertLockName(name);
  assertSingleNode(mode, name, 'use a read-write lock');
  return new ReadWriteLock(runtime, name);
}

/** LockClient.getMultiLock: names become the client's plain locks (`plainLock`), lock objects stay as they are. */
export function createMultiLock(runtime: LockRuntime, locks: readonly (string | BaseLock)[], plainLock: (name: string) => BaseLock): MultiLock {
  if (!Array.isArray(locks)) throw new InvalidLockArgumentError('multi-lock names', `expected an array of lock names, got ${describe(locks)}.`);
  return new MultiLock(
    runtime,
    locks.map((lock: unknown, i) => {
      if (lock instanceof BaseLock) return lock;
      if (typeof lock === 'object' && lock !== null) {
        throw new InvalidLockArgumentError(
          `multi-lock names[${i}]`,
          `expected a lock name or a lock object from this client (getLock, getFairLock, readLock()...), got ${lock.constructor?.name ?? 'an object'}.`,
        );
      }
      assertLockName(lock, `multi-lock names[${i}]`);
      return plainLock(lock);
    }),
  );
}

function assertSingleNode(mode: string, name: string, operation: string): void {
  if (mode === 'redlock') {
    throw new UnsupportedLockOperationError(
      name,
      `${operation} in redlock mode`,
      'its queue or reader set would live on independent masters that can disagree on order, so no waiter might ever win a majority. Use single, master-slave, sentinel or cluster mode for fair and read-write locks (plain locks and multi-locks work in redlock mode).',
    );
  }
}
