import { AsyncLocalStorage } from 'node:async_hooks';
import type { LockHandle } from './lock-handle.js';

/**
 * A lock context is our answer to Redisson's "thread": the unit that owns locks. An HTTP request, a
 * decorated call or an explicit `runInLockContext` scope is one context. Inside one context, taking
 * the same lock again is reentrant; two contexts are two owners and exclude each other.
 *
 * A context flows down through async calls (AsyncLocalStorage). Work started outside any context gets
 * a fresh owner per acquisition, so concurrent workers in one process never share a lock by accident.
 */
export interface LockContext {
  /** Process-unique number; with a client's random id it forms the owner id stored in Redis. */
  readonly id: number;
  /** The lock taken by the innermost decorated call or `withLock` around the running code. */
  readonly current: LockHandle | undefined;
}

const storage = new AsyncLocalStorage<LockContext>();
let sequence = 0;

/** A number never handed out before in this process, for a context or an anonymous owner. */
export function nextOwnerSequence(): number {
  sequence += 1;
  return sequence;
}

/**
 * @internal For the deterministic simulator only: the next number handed out is 1 again, so that a
 * seed runs the same after other seeds in the same thread as alone (owner ids, and what orders by them,
 * such as a sorted set's ties, depend on it). Never call it while contexts of an earlier run live.
 */
export function restartOwnerSequence(): void {
  sequence = 0;
}

export function getLockContext(): LockContext | undefined {
  return storage.getStore();
}

/** Runs `fn` in a new context: a new owner, unrelated to the caller's. */
export function runInNewLockContext<T>(fn: () => T): T {
  return storage.run({ id: nextOwnerSequence(), current: undefined }, fn);
}

/** Runs `fn` in the caller's context, or in a new one if there is none. */
export function runInLockContext<T>(fn: () => T): T {
  return storage.getStore() ? fn() : runInNewLockContext(fn);
}

/**
 * Runs `fn` as the same owner as `context`, with `handle` as the current lock. Used by the decorator
 * and `withLock`, so nested code sees the lock (token, signal) and re-enters it without deadlock.
 */
export function runWithCurrentLock<T>(context: LockContext, handle: LockHandle, fn: () => T): T {
  return storage.run({ id: context.id, current: handle }, fn);
}
