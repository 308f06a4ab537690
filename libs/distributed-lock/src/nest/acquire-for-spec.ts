import { InvalidLockArgumentError, type BaseLock, type LockHandle } from '../core/index.js';
import { assertLockName } from '../core/util/validate.js';
import { MULTI_KEY_SEPARATOR } from './distributed-lock.constants.js';
import type { DistributedLockSpec } from './distributed-lock.decorator.js';
import type { LockService } from './lock.service.js';

/** Per-call settings of a decorated acquisition. */
export interface AcquireForSpecOptions {
  /** How long to wait (the spec's waitTime or the module default). */
  waitMs: number;
  /** Cancels the wait (a client that hung up). */
  signal?: AbortSignal;
}

/** The lock of the spec's kind called `name`. */
function lockOfKind(locks: LockService, spec: DistributedLockSpec, name: string): BaseLock {
  switch (spec.kind) {
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

/** The names a resolved spec name stands for: one, or several for a multi-key spec. */
export function namesOf(spec: DistributedLockSpec, name: string): string[] {
  if (!name.includes(MULTI_KEY_SEPARATOR)) return [name];
  const names = name.split(MULTI_KEY_SEPARATOR);
  names.forEach((part, i) => assertLockName(part, `@DistributedLock key ${i} of ${spec.where || 'the decorated method'}`));
  return names;
}

/**
 * The one place where a decorated call (route interceptor or provider method wrapper) takes its
 * lock: the spec's kind, and a multi-lock when it has several keys.
 */
export function acquireForSpec(locks: LockService, spec: DistributedLockSpec, name: string, options: AcquireForSpecOptions): Promise<LockHandle> {
  const lockOptions = { leaseTime: spec.leaseMs, waitTime: options.waitMs, signal: options.signal };
  const names = namesOf(spec, name);
  if (names.length > 1) return locks.getMultiLock(names.map((part) => lockOfKind(locks, spec, part))).lock(lockOptions);
  if (names.length === 0) throw new InvalidLockArgumentError('@DistributedLock key', 'it resolved to no name.');
  return lockOfKind(locks, spec, names[0]!).lock(lockOptions);
}

/** The kind reported in events and spans for a decorated acquisition. */
export function kindOfSpec(spec: DistributedLockSpec): string {
  return spec.multi ? `multi:${spec.kind}` : spec.kind;
}
