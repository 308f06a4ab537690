import { AsyncLocalStorage } from 'node:async_hooks';
import type { ExecutionContext } from '@nestjs/common';
import { InvalidLockConfigError } from '../core/index.js';
import type { DistributedLockSpec } from './distributed-lock.decorator.js';

/** What the method wrapper needs at call time; implemented by LockCallRuntime. */
export interface LockedMethodRunner {
  runLocked(spec: DistributedLockSpec, args: unknown[], invoke: () => unknown, route: RouteCall | undefined): Promise<unknown>;
}

/**
 * Set by the interceptor around a route handler's invocation, so that the method wrapper of the same
 * decoration knows the call came through Nest's request pipeline:
 * - `locked`: the interceptor already holds the lock (a name from the request): run the method as is.
 * - `delegated`: the name comes from the arguments, which only the wrapper sees: the wrapper locks,
 *   and reports failures the way the transport expects (`mapError`: 423 + Retry-After, 400, 503).
 */
export interface RouteCall {
  readonly spec: DistributedLockSpec;
  readonly mode: 'locked' | 'delegated';
  readonly context: ExecutionContext;
  /** Aborted when the client hangs up while the call waits for the lock. */
  readonly signal?: AbortSignal;
  mapError(error: unknown, name: string): unknown;
}

const routeCalls = new AsyncLocalStorage<RouteCall>();
/** Instance -> the runner of the application that created it (bound at start-up by the explorer). */
const bindings = new WeakMap<object, LockedMethodRunner>();
const lockedMethods = new WeakSet<object>();

export function runAsRouteCall<T>(call: RouteCall, fn: () => T): T {
  return routeCalls.run(call, fn);
}

/** Makes the decorated methods of `instance` lock through `runner` (one Nest application's runtime). */
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
export function createLockedMethod(original: (...args: unknown[]) => unknown, spec: DistributedLockSpec): (...args: unknown[]) => unknown {
  const wrapper = function (this: object, ...args: unknown[]): unknown {
    const route = routeCalls.getStore();
    const own = route?.spec === spec ? route : undefined;
    // Code the method calls must not look like this route call (a nested decorated call locks itself).
    const invoke = (): unknown => routeCalls.exit(() => original.apply(this, args));
    if (own?.mode === 'locked') return invoke();
    const runner = bindings.get(this);
    if (!runner) {
      return Promise.reject(
        new InvalidLockConfigError(
          'DistributedLockModule',
          `${spec.where} is decorated with a lock, but this instance was not created by a Nest application that imports ` +
            'DistributedLockModule, or it is request-scoped, or it is called before the application initialised. ' +
            'Create it through Nest (a provider of a module), and call it once app.init() has run.',
        ),
      );
    }
    return runner.runLocked(spec, args, invoke, own);
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
