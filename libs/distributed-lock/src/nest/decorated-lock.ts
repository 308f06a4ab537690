import { InvalidLockArgumentError, type BaseLock, type LockHandle, type LockOptions } from '../core/index.js';
import { assertLockName } from '../core/util/validate.js';
import { MULTI_KEY_SEPARATOR } from './distributed-lock.constants.js';
import type { DecoratedSemaphore, DistributedLockMetadata } from './distributed-lock.options.js';
import type { LockService } from './lock.service.js';

/** Per-call settings of a decorated acquisition. */
export interface DecoratedLockOptions {
  /** How long to wait (the metadata's waitTime or the module default). */
  waitMs: number;
  /** Cancels the wait (a client that hung up). */
  signal?: AbortSignal;
}

/** The lock of the metadata's kind called `name`. */
function lockOfKind(locks: LockService, metadata: DistributedLockMetadata, name: string): BaseLock {
  switch (metadata.kind) {
    case 'fair':
      return locks.getFairLock(name);
    case 'read':
      return locks.getReadWriteLock(name).readLock();
    case 'write':
      return locks.getReadWriteLock(name).writeLock();
    default:
      return locks.getLock(name);
  }
}

/** The names a resolved metadata name stands for: one, or several for a multi-key metadata. */
export function namesOf(metadata: DistributedLockMetadata, name: string): string[] {
  if (!name.includes(MULTI_KEY_SEPARATOR)) return [name];
  const names = name.split(MULTI_KEY_SEPARATOR);
  names.forEach((part, i) => assertLockName(part, `@DistributedLock key ${i} of ${metadata.where || 'the decorated method'}`));
  return names;
}

/**
 * The one place where a decorated call (route interceptor or provider method wrapper) takes its
 * lock: the metadata's kind, and a multi-lock when it has several keys.
 */
export function takeDecoratedLock(locks: LockService, metadata: DistributedLockMetadata, name: string, options: DecoratedLockOptions): Promise<LockHandle> {
  const lockOptions = { leaseTime: metadata.leaseMs, waitTime: options.waitMs, signal: options.signal };
  if (metadata.semaphore) return takeDecoratedPermits(locks, metadata, metadata.semaphore, name, lockOptions);
  const names = namesOf(metadata, name);
  if (names.length > 1) return locks.getMultiLock(names.map((part) => lockOfKind(locks, metadata, part))).lock(lockOptions);
  if (names.length === 0) throw new InvalidLockArgumentError('@DistributedLock key', 'it resolved to no name.');
  return lockOfKind(locks, metadata, names[0]!).lock(lockOptions);
}

/** The kind reported in events and spans for a decorated acquisition. */
export function decoratedKind(metadata: DistributedLockMetadata): string {
  if (metadata.semaphore) return 'semaphore';
  return metadata.multi ? `multi:${metadata.kind}` : metadata.kind;
}

/** A @DistributedSemaphore call: `perCall` permits of the semaphore called `name` (one name only). */
function takeDecoratedPermits(
  locks: LockService,
  metadata: DistributedLockMetadata,
  semaphore: DecoratedSemaphore,
  name: string,
  options: LockOptions,
): Promise<LockHandle> {
  if (namesOf(metadata, name).length !== 1) {
    throw new InvalidLockArgumentError(
      `@DistributedSemaphore key of ${metadata.where}`,
      'it resolved to several names; a call takes permits of one semaphore.',
    );
  }
  const queueTimeout = semaphore.queueTimeoutMs;
  return locks.getSemaphore(name, { permits: semaphore.permits, ...(queueTimeout === undefined ? {} : { queueTimeout }) }).acquire(semaphore.perCall, options);
}
