import { BadRequestException, Injectable, Logger, ServiceUnavailableException, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Observable, type Subscription } from 'rxjs';
import {
  getLockContext,
  InvalidLockArgumentError,
  LockAcquireTimeoutError,
  LockBackendError,
  LockClientClosedError,
  LockKeyTemplateError,
  runInLockContext,
  type LockHandle,
} from '../core/index.js';
import { LockCallRuntime } from './lock-call.runtime.js';
import { runAsRouteCall, type RouteCall } from './locked-method.js';
import { runWithCurrentLock } from '../core/context/lock-context.js';
import { assertLockName } from '../core/util/validate.js';
import { DISTRIBUTED_LOCK_METADATA } from './distributed-lock.constants.js';
import type { DistributedLockSpec } from './distributed-lock.decorator.js';
import { LockKeyTemplate } from './lock-key.template.js';
import { LockUnavailableException } from './lock-unavailable.exception.js';
import { LockService } from './lock.service.js';

interface ClosableResponse {
  once?(event: 'close', listener: () => void): unknown;
  off?(event: 'close', listener: () => void): unknown;
  setHeader?(name: string, value: string): unknown;
  header?(name: string, value: string): unknown;
  raw?: ClosableResponse;
}

/**
 * Applies @DistributedLock. Protected hooks let a subclass change how names are resolved or how a
 * busy lock is reported, as @nestjs/throttler's guard does.
 */
@Injectable()
export class DistributedLockInterceptor implements NestInterceptor {
  protected readonly logger = new Logger('DistributedLock');

  constructor(
    protected readonly reflector: Reflector,
    protected readonly locks: LockService,
    protected readonly runtime: LockCallRuntime,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const spec = this.reflector.get<DistributedLockSpec | undefined>(DISTRIBUTED_LOCK_METADATA, context.getHandler());
    if (!spec) return next.handle();
    const response = context.getType() === 'http' ? context.switchToHttp().getResponse<ClosableResponse>() : undefined;
    if (spec.via === 'method') return this.delegate(spec, context, next, response);
    let name: string;
    try {
      name = this.resolveName(spec, context);
    } catch (error) {
      return new Observable((subscriber) => subscriber.error(this.mapResolveError(error)));
    }
    const waitTime = this.runtime.waitMsOf(spec);

    return new Observable<unknown>((subscriber) => {
      const done = this.runtime.begin();
      // A client that hangs up while we wait stops the wait; once the handler runs it finishes normally.
      const abort = new AbortController();
      const closeTarget = response?.raw ?? response;
      const onClose = (): void => abort.abort(new Error('client closed the connection'));
      closeTarget?.once?.('close', onClose);
      let handle: LockHandle | undefined;
      let acquiredAt = 0;
      let inner: Subscription | undefined;
      let torn = false;

      const release = async (): Promise<void> => {
        const held = handle;
        handle = undefined;
        if (held) await this.runtime.release(held, spec, acquiredAt);
      };
      const settle = (notify: () => void): void => {
        void release().then(() => {
          done();
          notify();
        });
      };

      runInLockContext(() => {
        const lockContext = getLockContext()!;
        const calledAt = performance.now();
        this.runtime.acquire(spec, name, waitTime, abort.signal).then(
          (acquired) => {
            closeTarget?.off?.('close', onClose);
            handle = acquired;
            acquiredAt = performance.now();
            if (torn) {
              settle(() => undefined);
              return;
            }
            const route: RouteCall = { spec, mode: 'locked', context, mapError: (error) => error };
            inner = runAsRouteCall(route, () => runWithCurrentLock(lockContext, acquired, () => next.handle())).subscribe({
              next: (value) => subscriber.next(value),
              error: (error: unknown) => settle(() => subscriber.error(error)),
              complete: () => settle(() => subscriber.complete()),
            });
          },
          (error: unknown) => {
            closeTarget?.off?.('close', onClose);
            if (error instanceof LockAcquireTimeoutError && spec.onLocked !== 'throw') {
              this.runtime.whenLocked(spec, { name, waitedMs: performance.now() - calledAt, error, args: [], context }).then(
                (value) => {
                  done();
                  subscriber.next(value);
                  subscriber.complete();
                },
                (failure: unknown) => {
                  done();
                  subscriber.error(failure);
                },
              );
              return;
            }
            done();
            subscriber.error(this.mapAcquireError(error, name, response));
          },
        );
      });

      return () => {
        torn = true;
        closeTarget?.off?.('close', onClose);
        abort.abort(new Error('unsubscribed'));
        inner?.unsubscribe();
        if (handle) settle(() => undefined);
      };
    });
  }

  /**
   * A key over the method's arguments (`keyFromArgs`, `{args.N}`): only the method wrapper sees the
   * arguments (after pipes), so it takes the lock; this marks the call as a route call, so that the
   * wrapper reports failures as this interceptor would (423 + Retry-After, 400, 503) and stops
   * waiting when the client hangs up.
   */
  private delegate(spec: DistributedLockSpec, context: ExecutionContext, next: CallHandler, response: ClosableResponse | undefined): Observable<unknown> {
    return new Observable<unknown>((subscriber) => {
      const abort = new AbortController();
      const closeTarget = response?.raw ?? response;
      const onClose = (): void => abort.abort(new Error('client closed the connection'));
      closeTarget?.once?.('close', onClose);
      const route: RouteCall = {
        spec,
        mode: 'delegated',
        context,
        signal: abort.signal,
        mapError: (error, name) => this.mapResolveError(this.mapAcquireError(error, name, response)),
      };
      const inner = runAsRouteCall(route, () => next.handle()).subscribe({
        next: (value) => subscriber.next(value),
        error: (error: unknown) => {
          closeTarget?.off?.('close', onClose);
          subscriber.error(error);
        },
        complete: () => {
          closeTarget?.off?.('close', onClose);
          subscriber.complete();
        },
      });
      return () => {
        closeTarget?.off?.('close', onClose);
        inner.unsubscribe();
      };
    });
  }

  /** The lock name for this call. Override to add tenancy or other scoping. */
  protected resolveName(spec: DistributedLockSpec, context: ExecutionContext): string {
    const key = spec.key!;
    const name = key instanceof LockKeyTemplate ? key.resolve(context) : key(context);
    assertLockName(name, '@DistributedLock key');
    return name;
  }

  /** What the client gets when the lock stayed busy for the whole waitTime. */
  protected unavailable(error: LockAcquireTimeoutError, response: ClosableResponse | undefined): Error {
    const seconds = Math.max(1, Math.ceil(error.retryAfterMs / 1000));
    setHeader(response, 'Retry-After', String(seconds));
    return new LockUnavailableException(error.lockName, seconds, this.locks.settings.unavailableStatus);
  }

  protected mapResolveError(error: unknown): unknown {
    if (error instanceof LockKeyTemplateError) {
      return new BadRequestException({ statusCode: 400, error: 'Bad Request', code: error.code, message: error.message });
    }
    if (error instanceof InvalidLockArgumentError) {
      return new BadRequestException({ statusCode: 400, error: 'Bad Request', code: error.code, message: error.message });
    }
    return error;
  }

  protected mapAcquireError(error: unknown, name: string, response: ClosableResponse | undefined): unknown {
    if (error instanceof LockAcquireTimeoutError) return this.unavailable(error, response);
    if (error instanceof LockBackendError || error instanceof LockClientClosedError) {
      setHeader(response, 'Retry-After', '1');
      return new ServiceUnavailableException({
        statusCode: 503,
        error: 'Service Unavailable',
        code: error.code,
        message: `The lock "${name}" could not be taken because its store is unavailable. Retry shortly.`,
      });
    }
    return error;
  }
}

function setHeader(response: ClosableResponse | undefined, name: string, value: string): void {
  if (!response) return;
  if (typeof response.setHeader === 'function') response.setHeader(name, value);
  else if (typeof response.header === 'function') response.header(name, value);
}
