import {
  BadRequestException,
  Injectable,
  Logger,
  ServiceUnavailableException,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Observable, Subscription, throwError } from 'rxjs';
import {
  InvalidLockArgumentError,
  LockAcquireTimeoutError,
  LockBackendError,
  LockClientClosedError,
  LockKeyTemplateError,
  type LockLostError,
} from '../core/index.js';
import { DistributedLockRunner } from './distributed-lock.runner.js';
import { runAsRouteCall, type RouteCallContext } from './locked-method.js';
import { assertLockName } from '../core/util/validate.js';
import { DISTRIBUTED_LOCK_METADATA } from './distributed-lock.constants.js';
import type { DistributedLockMetadata } from './distributed-lock.options.js';
import { LockKeyTemplate } from './lock-key.template.js';
import { LockUnavailableException } from './lock-unavailable.exception.js';
import { LockService } from './lock.service.js';

interface ClosableResponse {
  once?(event: 'close', listener: () => void): unknown;
  off?(event: 'close', listener: () => void): unknown;
  setHeader?(name: string, value: string): unknown;
  header?(name: string, value: string): unknown;
  /** Express (and Node's ServerResponse): the status line and headers are out. */
  headersSent?: boolean;
  /** Fastify's reply: the response was sent. */
  sent?: boolean;
  raw?: ClosableResponse;
}

/**
 * Applies @DistributedLock to route handlers: resolves a name that reads the request, stops the wait
 * when the client hangs up, and reports a lock that stayed busy (423/409 + Retry-After), a bad key
 * (400) or an unavailable Redis (503). The lock itself is taken by the method wrapper (see
 * locked-method.ts), the one place that knows when the handler's work has ended. Protected hooks let
 * a subclass change how names are resolved or how a busy lock is reported, as @nestjs/throttler's
 * guard does.
 */
@Injectable()
export class DistributedLockInterceptor implements NestInterceptor {
  protected readonly logger = new Logger('DistributedLock');

  constructor(
    protected readonly reflector: Reflector,
    protected readonly locks: LockService,
    protected readonly runner: DistributedLockRunner,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const metadata = this.reflector.get<DistributedLockMetadata | undefined>(DISTRIBUTED_LOCK_METADATA, context.getHandler());
    if (!metadata) return next.handle();
    const response = context.getType() === 'http' ? context.switchToHttp().getResponse<ClosableResponse>() : undefined;
    let name: string | undefined;
    if (metadata.via === 'interceptor') {
      try {
        name = this.resolveName(metadata, context);
      } catch (error) {
        return throwError(() => this.mapResolveError(error));
      }
    }
    return new Observable<unknown>((subscriber) => {
      // A client that hangs up, or an outer interceptor that stops listening, ends the wait for the
      // lock; once the handler runs, the method wrapper holds the lock until its work has ended.
      const abort = new AbortController();
      const closeTarget = response?.raw ?? response;
      const onClose = (): void => abort.abort(new Error('client closed the connection'));
      closeTarget?.once?.('close', onClose);
      const handlerStream = new Subscription(); // what 'abort-request' drops
      const route: RouteCallContext = {
        metadata,
        context,
        name,
        signal: abort.signal,
        runner: this.runner,
        mapError: (error, lockName) => this.mapResolveError(this.mapAcquireError(error, lockName, response)),
        abortRequest: (error) => {
          if (subscriber.closed || responseSent(response)) return; // too late to answer otherwise
          closeTarget?.off?.('close', onClose);
          subscriber.error(this.lockLost(error, response));
          handlerStream.unsubscribe(); // the handler runs on; its lock is released when it ends, its result dropped
        },
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
      handlerStream.add(inner);
      return () => {
        closeTarget?.off?.('close', onClose);
        abort.abort(new Error('unsubscribed'));
        inner.unsubscribe();
      };
    });
  }

  /** The lock name for this call. Override to add tenancy or other scoping. */
  protected resolveName(metadata: DistributedLockMetadata, context: ExecutionContext): string {
    const key = metadata.key!;
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

  /** What the client gets when the lock was lost during the handler (`onLost: 'abort-request'`). */
  protected lockLost(error: LockLostError, response: ClosableResponse | undefined): Error {
    setHeader(response, 'Retry-After', '1');
    return new ServiceUnavailableException({
      statusCode: 503,
      error: 'Service Unavailable',
      code: error.code,
      reason: error.reason,
      message: `The lock "${error.lockName}" was lost while this request was being handled (${error.reason}), so its work may be incomplete. Retry.`,
    });
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

function responseSent(response: ClosableResponse | undefined): boolean {
  return response?.headersSent === true || response?.sent === true || response?.raw?.headersSent === true;
}

function setHeader(response: ClosableResponse | undefined, name: string, value: string): void {
  if (!response) return;
  if (typeof response.setHeader === 'function') response.setHeader(name, value);
  else if (typeof response.header === 'function') response.header(name, value);
}
