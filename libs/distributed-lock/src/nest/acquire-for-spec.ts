import type { LockHandle } from '../core/index.js';
import type { DistributedLockSpec } from './distributed-lock.decorator.js';
import type { LockService } from './lock.service.js';

/** Per-call settings of a decorated acquisition. */
export interface AcquireForSpecOptions {
  /** How long to wait (the spec's waitTime or the module default). */
  waitMs: number;
  /** Cancels the wait (a client that hung up). */
  signal?: AbortSignal;
}

/**
 * The one place where a decorated call (route interceptor or provider method wrapper) takes its
 * lock. Lock kinds and multiple keys plug in here: both paths then get them.
 */
export function acquireForSpec(locks: LockService, spec: DistributedLockSpec, name: string, options: AcquireForSpecOptions): Promise<LockHandle> {
  return locks.lock(name, { leaseTime: spec.leaseMs, waitTime: options.waitMs, signal: options.signal });
}

/** The kind reported in events and spans for a decorated acquisition. */
export function kindOfSpec(_spec: DistributedLockSpec): string {
  return 'reentrant';
}
