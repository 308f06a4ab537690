import { AsyncLocalStorage } from 'node:async_hooks';
import type { ExecutionContext } from '@nestjs/common';
import { InvalidLockConfigError } from '../core/index.js';
import type { LockHandle } from '../core/index.js';
import type { DistributedLockMetadata } from './distributed-lock.options.js';

/** What the method wrapper needs of the application's DistributedLockRunner. */
export interface LockedMethodRunner {
  /** Takes the lock of one call, runs `invoke` with the handle, releases once its work has ended. */
  run(metadata: DistributedLockMetadata, args: unknown[], invoke: (lock: LockHandle) => unknown, request: RequestCall | undefined): Promise<unknown>;
}

/**
 * A request Nest is handling with a decorated handler (an HTTP route, a GraphQL resolver, a message
 * pattern, a gateway message), as DistributedLockInterceptor hands it to the handler's method wrapper:
 * Nest calls the wrapper with the piped arguments only, so the rest travels in AsyncLocalStorage.
 * Plain data: the wrapper's runner reports failures by throwing, never by calling back.
 */
export interface RequestCall {
  readonly metadata: DistributedLockMetadata;
  readonly context: ExecutionContext;
  /** Aborted when the client hangs up (or the request's observable is unsubscribed) while the call waits. */
  readonly signal: AbortSignal;
  /** Put in front of every lock name of the call (DistributedLockInterceptor.nameScope). */
  readonly scope: string;
  /** This application's runner, for a request-scoped controller, which is created per request and so never bound at start-up. */
  readonly runner: LockedMethodRunner;
}

/**
 * Stands for the lock of a decorated handler while its parameters are resolved (before the lock is
 * taken): `@CurrentLock()` returns it, and the method wrapper replaces it with the handle.
 */
export const CURRENT_LOCK_PENDING: unique symbol = Symbol('the @DistributedLock of this call, once taken');

const requestCalls = new AsyncLocalStorage<RequestCall>();
/** Instance -> the runner of the application that created it (bound at start-up by the explorer). */
const bindings = new WeakMap<object, LockedMethodRunner>();
const lockedMethods = new WeakSet<object>();

/** Runs `fn` (Nest's next handler) with `call` visible to the method wrapper it reaches. */
export function runAsRequestCall<T>(call: RequestCall, fn: () => T): T {
  return requestCalls.run(call, fn);
}

/** The request call an interceptor set up around the running code, if any. */
export function currentRequestCall(): RequestCall | undefined {
  return requestCalls.getStore();
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
 * gets the locking version). It takes the lock for every call, request or not: it is the one place
 * that sees the method's own promise, so the lock is held until the method's work has really ended,
 * whatever happens to a request's observable, and the one place that sees the piped arguments. Every
 * Reflect metadata key of the original is copied to it, so route, guard, Swagger, @Cron,
 * SetMetadata... metadata survive; decorators applied above ours write to it directly.
 */
export function createLockedMethod(original: (...args: unknown[]) => unknown, metadata: DistributedLockMetadata): (...args: unknown[]) => unknown {
  const wrapper = function (this: object, ...args: unknown[]): unknown {
    const current = requestCalls.getStore();
    const request = current?.metadata === metadata ? current : undefined;
    // Code the method calls must not look like this request (a nested decorated call locks itself).
    // `@CurrentLock()` parameters were resolved before the lock was taken: they get the handle now.
    const invoke = (lock: LockHandle): unknown =>
      requestCalls.exit(() =>
        original.apply(
          this,
          args.map((arg) => (arg === CURRENT_LOCK_PENDING ? lock : arg)),
        ),
      );
    // The application that created the instance, or, for a request-scoped controller, the request's.
    const runner = bindings.get(this) ?? request?.runner;
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
    return runner.run(metadata, args, invoke, request);
  };
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
