import { SetMetadata, UseInterceptors } from '@nestjs/common';
import { InvalidLockArgumentError, type Duration } from '../core/index.js';
import { DistributedLockInterceptor } from './distributed-lock.interceptor.js';
import {
  DISTRIBUTED_LOCK_METADATA,
  toLockMetadata,
  type DistributedLockArgsOptions,
  type DistributedLockMetadata,
  type DistributedLockOptions,
  type LockNameFactory,
  type LockedMethodDecorator,
} from './distributed-lock.options.js';
import { createLockedMethod, isLockedMethod } from './locked-method.js';

/**
 * Runs the decorated method under a distributed lock: acquired before it, released after its promise
 * (or a request handler's observable) settles, success or error. Works on request handlers (HTTP
 * routes, GraphQL resolvers, message patterns, gateway messages: the name may come from the request,
 * and a failure to lock is answered in the transport's terms) and on methods of any provider
 * (services, queue processors, CQRS handlers, scheduled jobs; name from the arguments). Errors of the
 * method pass unchanged.
 *
 * ```ts
 * @DistributedLock('goods', '5s')
 * @DistributedLock({ name: 'product:{params.id}', waitTime: '2s' })          // HTTP route
 * @DistributedLock({ nameFromArgs: (id: string) => `product:${id}` })        // any provider
 * @DistributedLock({ name: 'order:{args.0.id}', onBusy: 'skip' })
 * ```
 */
export function DistributedLock(key: string | LockNameFactory, leaseTime?: Duration): MethodDecorator;
export function DistributedLock(options: DistributedLockOptions): MethodDecorator;
export function DistributedLock<A extends unknown[]>(options: DistributedLockArgsOptions<A>): LockedMethodDecorator<A>;
export function DistributedLock(
  keyOrOptions: string | LockNameFactory | DistributedLockOptions | DistributedLockArgsOptions<unknown[]>,
  leaseTime?: Duration,
): MethodDecorator {
  const metadata = toLockMetadata(keyOrOptions, leaseTime);
  return lockDecorator(metadata);
}

/** Applies a compiled metadata: wraps the method (keeping its metadata) and registers the interceptor. */
export function lockDecorator(metadata: DistributedLockMetadata): MethodDecorator {
  const { decorator } = metadata;
  return (target, propertyKey, descriptor) => {
    const original: unknown = descriptor.value;
    const where = `${typeof target === 'function' ? target.name : target.constructor.name}.${String(propertyKey)}`;
    if (typeof original !== 'function') {
      throw new InvalidLockArgumentError(decorator, `${where} is not a method; put ${decorator} on a method.`);
    }
    if (isLockedMethod(original)) {
      throw new InvalidLockArgumentError(decorator, `${where} already has a lock decorator; give a method one @DistributedLock or @ScheduledLock.`);
    }
    const placed: DistributedLockMetadata = { ...metadata, where };
    const wrapper = createLockedMethod(original as (...args: unknown[]) => unknown, placed);
    descriptor.value = wrapper as typeof descriptor.value;
    SetMetadata(DISTRIBUTED_LOCK_METADATA, placed)(target, propertyKey, descriptor);
    UseInterceptors(DistributedLockInterceptor)(target, propertyKey, descriptor);
    return descriptor;
  };
}
