import { Injectable, Logger, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Observable } from 'rxjs';
import { getLockContext, runInNewLockContext } from '../core/internal.js';
import {
  LockBackendError,
  type InvalidLockArgumentError,
  type LockAcquireTimeoutError,
  type LockClientClosedError,
  type LockNameTemplateError,
  type LockLostError,
} from '../core/index.js';
import { DISTRIBUTED_LOCK_METADATA, type DistributedLockMetadata } from './distributed-lock.options.js';
import { DistributedLockRunner } from './distributed-lock.runner.js';
import { badNameAnswer, busyAnswer, isEvent, LockedCallFailure, lostAnswer, unavailableAnswer } from './lock-failure.answers.js';
import { LockService } from './lock.service.js';
import { requestCalls, type RequestCall } from './request-call.js';

interface ClosableResponse {
  once?(event: 'close', listener: () => void): unknown;
  off?(event: 'close', listener: () => void): unknown;
  raw?: ClosableResponse;
}

/**
 * Registered globally by DistributedLockModule: runs each incoming request in its own lock context,
 * the Node counterpart of Redisson's thread. `lock(name)` and `unlock(name)` in one request then
 * refer to the same owner; concurrent requests are different owners. (In this file because it is the
 * other half of how a request enters the library: its context here, its decorated handler's lock below.)
 */
@Injectable()
export class LockContextInterceptor implements NestInterceptor {
  constructor(private readonly locks: LockService) {}

  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (!this.locks.settings.requestContext || getLockContext()) return next.handle();
    // handle() binds the handler to the async context it is called in: call it inside the new one.
    return runInNewLockContext(() => next.handle());
  }
}

/**
 * Applies @DistributedLock to request handlers (HTTP routes, GraphQL resolvers, message patterns,
 * gateway messages). The lock itself is taken by the method wrapper's runner (distributed-lock.runner.ts), the
 * one place that sees the piped arguments and the method's own promise; this interceptor hands it the
 * request (ExecutionContext, a signal that aborts the wait when the client hangs up, a name scope),
 * and turns what the runner throws for the request's lock (a LockedCallFailure) into the transport's
 * answer (lock-failure.answers.ts; docs/guides/transports.md), logged at a fitting level. Errors of
 * the handler itself pass unchanged.
 *
 * Extension points, as @nestjs/throttler's guard has: `nameScope` and the four answers (`busy`,
 * `storeUnavailable`, `badName`, `lockLost`) are protected. To use a subclass, register it globally
 * (`{ provide: APP_INTERCEPTOR, useClass: MyLockInterceptor }`): it then runs first for every
 * decorated handler, and the interceptor that @DistributedLock registers on the handler steps aside.
 */
@Injectable()
export class DistributedLockInterceptor implements NestInterceptor {
  protected readonly logger = new Logger('DistributedLock');

  /** @internal Nest injects it; a subclass declares no constructor (it takes other providers with `@Inject()` on properties). */
  constructor(
    protected readonly reflector: Reflector,
    protected readonly locks: LockService,
    /** @internal */
    protected readonly runner: DistributedLockRunner,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const metadata = this.reflector.get<DistributedLockMetadata | undefined>(DISTRIBUTED_LOCK_METADATA, context.getHandler());
    // Not decorated; or an outer DistributedLockInterceptor (a subclass registered globally) has it.
    if (!metadata || requestCalls.getStore()?.context === context) return next.handle();
    return new Observable<unknown>((subscriber) => {
      // A client that hangs up, or an outer interceptor that stops listening, ends the wait for the
      // lock; once the handler runs, the method wrapper holds the lock until its work has ended.
      const abort = new AbortController();
      const response = context.getType() === 'http' ? context.switchToHttp().getResponse<ClosableResponse>() : undefined;
      const closeTarget = response?.raw ?? response;
      const onClose = (): void => abort.abort(new Error('client closed the connection'));
      closeTarget?.once?.('close', onClose);
      const stopWatchingClose = (): void => void closeTarget?.off?.('close', onClose);
      let call: RequestCall;
      try {
        call = { metadata, context, signal: abort.signal, scope: this.nameScope(context), runner: this.runner };
      } catch (error) {
        stopWatchingClose();
        subscriber.error(error);
        return undefined;
      }
      const inner = requestCalls
        .run(call, () => next.handle())
        .subscribe({
          next: (value) => subscriber.next(value),
          error: (error: unknown) => {
            stopWatchingClose();
            if (!(error instanceof LockedCallFailure) || error.request !== call) subscriber.error(error);
            else
              void this.answer(error).then(
                (answer) => subscriber.error(answer),
                (failure: unknown) => subscriber.error(failure), // a hook that threw: its error goes out instead
              );
          },
          complete: () => {
            stopWatchingClose();
            subscriber.complete();
          },
        });
      return () => {
        stopWatchingClose();
        abort.abort(new Error('unsubscribed'));
        inner.unsubscribe();
      };
    });
  }

  /**
   * Put in front of every lock name of a request (default: nothing). Override to scope the locks of
   * decorated handlers, e.g. by tenant: `return \`tenant:${request.headers['x-tenant']}:\``. It applies
   * to request handlers only, not to decorated methods that code calls.
   */
  protected nameScope(_context: ExecutionContext): string {
    return '';
  }

  /** What the client gets when the lock stayed busy for the whole waitTime (HTTP: 423 or 409 with Retry-After). */
  protected busy(error: LockAcquireTimeoutError, context: ExecutionContext): unknown {
    return busyAnswer(error, context, this.locks.settings.busyStatus);
  }

  /** What the client gets when Redis did not answer, or the application is shutting down (HTTP: 503 with Retry-After: 1). */
  protected storeUnavailable(error: LockBackendError | LockClientClosedError, context: ExecutionContext, name: string): unknown {
    return unavailableAnswer(error, context, name);
  }

  /** What the client gets when the lock name cannot be resolved from the request (a template field missing: HTTP 400). */
  protected badName(error: LockNameTemplateError | InvalidLockArgumentError, context: ExecutionContext): unknown {
    return badNameAnswer(error, context);
  }

  /** What the client gets when the lock was lost during the handler (`onLost: 'abort-request'`; HTTP 503 with Retry-After: 1). */
  protected lockLost(error: LockLostError, context: ExecutionContext): unknown {
    return lostAnswer(error, context);
  }

  /** Logs the failure (outage: once per outage; busy, bad name: debug, or log for an event no client hears of) and asks the hook for the answer. */
  private async answer({ failure, lockName, request }: LockedCallFailure): Promise<unknown> {
    const { context, metadata } = request;
    const quietly = (message: string): void => (isEvent(context) ? this.logger.log(`${message}; the event was not handled`) : this.logger.debug?.(message));
    switch (failure.kind) {
      case 'busy':
        quietly(`${metadata.where}: lock "${failure.error.lockName}" stayed busy for its waitTime`);
        return this.busy(failure.error, context);
      case 'unavailable':
        if (failure.error instanceof LockBackendError) this.locks.outage.failed(metadata.where, failure.error, lockName);
        else quietly(`${metadata.where}: ${failure.error.message}`);
        return this.storeUnavailable(failure.error, context, lockName);
      case 'bad-name':
        quietly(`${metadata.where}: ${failure.error.message}`);
        return this.badName(failure.error, context);
      case 'lost': // LockService warns of every lost lock
        return this.lockLost(failure.error, context);
    }
  }
}
