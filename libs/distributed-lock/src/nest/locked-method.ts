import { AsyncLocalStorage } from 'node:async_hooks';
import type { ExecutionContext } from '@nestjs/common';
import { InvalidLockConfigError } from '../core/index.js';
import type { LockHandle, LockLostError } from '../core/index.js';
import type { DistributedLockMetadata } from './distributed-lock.options.js';
import { CURRENT_LOCK_PENDING } from './current-lock.decorator.js';

/** What the method wrapper needs at call time; implemented by DistributedLockRunner. */
export interface LockedMethodRunner {
  /** Takes the lock, runs `invoke` with the handle, releases when its work has ended. */
  runLocked(metadata: DistributedLockMetadata, args: unknown[], invoke: (lock: LockHandle) => unknown, route: RouteCallContext | undefined): Promise<unknown>;
}

/**
 * Set by the interceptor around a route handler's invocation, so that the method wrapper of the same
 * decoration knows the call came through Nest's request pipeline. The wrapper takes the lock for every
 * call, route or not (it is the one place that sees the method's own promise, so the lock is held
 * until the handler's work has really ended, whatever happens to the request's observable); for a
 * route it uses what only the interceptor knows.
 */
export interface RouteCallContext {
  readonly metadata: DistributedLockMetadata;
  readonly context: ExecutionContext;
  /** The lock name resolved from the request, when the key reads the request (or is fixed). */
  readonly name: string | undefined;
  /** Aborted when the client hangs up (or the request's observable is unsubscribed) while the call waits. */
  readonly signal: AbortSignal;
  /** The application's runner (routes need no start-up binding, so request-scoped controllers work). */
  readonly runner: LockedMethodRunner;
  /** How the transport reports a failure to lock (423 + Retry-After, 400, 503). */
  mapError(error: unknown, name: string): unknown;
  /** `onLost: 'abort-request'`: answers the request now (503) if its response has not been sent. */
  abortRequest(error: LockLostError): void;
}

const routeCalls = new AsyncLocalStorage<RouteCallContext>();
/** Instance -> the runner of the application that created it (bound at start-up by the explorer). */
const bindings = new WeakMap<object, LockedMethodRunner>();
const lockedMethods = new WeakSet<object>();

export function runAsRouteCall<T>(call: RouteCallContext, fn: () => T): T {
  return routeCalls.run(call, fn);
}

/** Makes the decorated methods of `instance` lock through `runner` (one Nest application's DistributedLockRunner). */
export function bindLockedInstance(instance: object, runner: LockedMethodRunner): void {
  bindings.set(instance, runner);
}

export function isLockedMethod(value: unknown): boolean {
  return typeof value === 'function' && lockedMethods.has(value);
}

/**
 * The function that replaces a decorated method on its class, when the class is defined (so that
 * every reader of the method, e.g. @nestjs/schedule's explorer, whatever order modules start in,
 * gets the locking version). Every Reflect metadata key of the original is copied to it, so route,
 * guard, Swagger, @Cron, SetMetadata... metadata survive; decorators applied above ours write to it
 * directly.
 */
export function createLockedMethod(original: (...args: unknown[]) => unknown, metadata: DistributedLockMetadata): (...args: unknown[]) => unknown {
  const wrapper = function (this: object, ...args: unknown[]): unknown {
    const route = routeCalls.getStore();
    const own = route?.metadata === metadata ? route : undefined;
    // Code the method calls must not look like this route call (a nested decorated call locks itself).
    // `@CurrentLock()` parameters were resolved before the lock was taken: they get the handle now.
    const invoke = (lock: LockHandle): unknown =>
      routeCalls.exit(() =>
        original.apply(
          this,
          args.map((arg) => (arg === CURRENT_LOCK_PENDING ? lock : arg)),
        ),
      );
    const runner = own?.runner ?? bindings.get(this);
    if (!runner) {
      return Promise.reject(
        new InvalidLockConfigError(
          'DistributedLockModule',
          `${metadata.where} is decorated with a lock, but this instance was not created by a Nest application that imports ` +
            'DistributedLockModule, or it is request-scoped, or it is called before the application initialised. ' +
            'Create it through Nest (a provider of a module), and call it once app.init() has run.',
        ),
      );
    }
    return runner.runLocked(metadata, args, invoke, own);
  };
  Object.defineProperty(wrapper, 'name', { value: original.name, configurable: true });
  Object.defineProperty(wrapper, 'length', { value: original.length, configurable: true });
  copyMetadata(original, wrapper);
  lockedMethods.add(wrapper);
  return wrapper;
}

/** Copies every own Reflect metadata entry of `from` to `to` (what decorators below ours set). */
export function copyMetadata(from: object, to: object): void {
  for (const key of Reflect.getOwnMetadataKeys(from) as unknown[]) {
    Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, from), to);
  }
}
