import { AsyncLocalStorage } from 'node:async_hooks';
import type { ExecutionContext } from '@nestjs/common';
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
 * Nest calls the wrapper with the piped arguments only, so the rest travels in AsyncLocalStorage
 * (`requestCalls`). Plain data: the wrapper's runner reports failures by throwing, never by calling back.
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

/**
 * The request call around the running code: DistributedLockInterceptor runs Nest's next handler in
 * it (`requestCalls.run`), the method wrapper reads it (`getStore`) and leaves it for the method's own
 * code (`exit`: a nested decorated call locks for itself).
 */
export const requestCalls = new AsyncLocalStorage<RequestCall>();
