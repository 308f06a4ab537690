import type { DistributedLockMetadata } from './distributed-lock.options.js';
import { lockedMethod } from './distributed-lock.runner.js';

const lockedMethods = new WeakSet<object>();

export function isLockedMethod(value: unknown): boolean {
  return typeof value === 'function' && lockedMethods.has(value);
}

/**
 * Replaces a decorated method on its class, when the class is defined (so that every reader of the
 * method, e.g. @nestjs/schedule's explorer, whatever order modules start in, gets the locking
 * version), with a function that takes the lock for every call, request or not (lockedMethod,
 * distributed-lock.runner.ts): it is the one place that sees the method's own promise, so the lock is
 * held until the method's work has really ended, whatever happens to a request's observable, and the
 * one place that sees the piped arguments. Every Reflect metadata key of the original is copied to
 * it, so route, guard, Swagger, @Cron, SetMetadata... metadata survive; decorators applied above ours
 * write to it directly.
 */
export function createLockedMethod(original: (...args: unknown[]) => unknown, metadata: DistributedLockMetadata): (...args: unknown[]) => unknown {
  const wrapper = lockedMethod(original, metadata);
  Object.defineProperty(wrapper, 'name', { value: original.name, configurable: true });
  Object.defineProperty(wrapper, 'length', { value: original.length, configurable: true });
  copyMetadata(original, wrapper);
  lockedMethods.add(wrapper);
  return wrapper;
}

/** Copies every own Reflect metadata entry of `from` to `to` (what decorators below ours set). */
function copyMetadata(from: object, to: object): void {
  for (const key of Reflect.getOwnMetadataKeys(from) as unknown[]) {
    Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, from), to);
  }
}
