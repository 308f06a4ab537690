import { BadRequestException, ServiceUnavailableException, type ExecutionContext } from '@nestjs/common';
import {
  InvalidLockArgumentError,
  LockAcquireTimeoutError,
  LockBackendError,
  LockClientClosedError,
  LockKeyTemplateError,
  LockLostError,
} from '../core/index.js';
import { LockUnavailableException } from './lock-unavailable.exception.js';
import type { RequestCall } from './locked-method.js';

/**
 * What the client receives when a decorated request handler cannot run, or finish, under its lock:
 * an HttpException (423 or 409 with Retry-After, 503 with Retry-After, 400), on every transport.
 */

/** What went wrong with a request's lock: `error` is the library's own error. */
export type LockFailure =
  | { readonly kind: 'busy'; readonly error: LockAcquireTimeoutError }
  | { readonly kind: 'unavailable'; readonly error: LockBackendError | LockClientClosedError }
  | { readonly kind: 'bad-key'; readonly error: LockKeyTemplateError | InvalidLockArgumentError }
  | { readonly kind: 'lost'; readonly error: LockLostError };

/** The failure a core error stands for, when the lock of a request fails with it. */
export function failureOf(error: unknown): LockFailure | undefined {
  if (error instanceof LockAcquireTimeoutError) return { kind: 'busy', error };
  if (error instanceof LockBackendError || error instanceof LockClientClosedError) return { kind: 'unavailable', error };
  // An InvalidLockArgumentError at call time is about what the key resolved to (an empty or too long
  // name, a semaphore key naming several semaphores) or, rarely, a semaphore's stored size.
  if (error instanceof LockKeyTemplateError || error instanceof InvalidLockArgumentError) return { kind: 'bad-key', error };
  if (error instanceof LockLostError) return { kind: 'lost', error };
  return undefined;
}

/**
 * Thrown by a request's LockedCall (never by a call made by code) so that the interceptor of that
 * request, and only it, turns the failure into its transport's answer.
 */
export class LockedCallFailure extends Error {
  constructor(
    readonly failure: LockFailure,
    /** The call's lock name (names joined with ', ' for a multi-lock). */
    readonly lockName: string,
    readonly request: RequestCall,
  ) {
    super(failure.error.message, { cause: failure.error });
    this.name = 'LockedCallFailure';
  }
}

/** Busy: 423 (or 409) with Retry-After in seconds. */
export function busyAnswer(error: LockAcquireTimeoutError, context: ExecutionContext, status: 409 | 423): Error {
  const seconds = Math.max(1, Math.ceil(error.retryAfterMs / 1000));
  setHeader(context, 'Retry-After', String(seconds));
  return new LockUnavailableException(error.lockName, seconds, status);
}

/** Redis unavailable (or the application shutting down): 503 with Retry-After: 1. */
export function unavailableAnswer(error: LockBackendError | LockClientClosedError, context: ExecutionContext, name: string): Error {
  const message = `The lock "${name}" could not be taken because its store is unavailable. Retry shortly.`;
  setHeader(context, 'Retry-After', '1');
  return new ServiceUnavailableException({ statusCode: 503, error: 'Service Unavailable', code: error.code, message });
}

/** A key the request cannot fill (a template field missing), or a name that cannot be a lock name: 400. */
export function badKeyAnswer(error: LockKeyTemplateError | InvalidLockArgumentError): Error {
  return new BadRequestException({ statusCode: 400, error: 'Bad Request', code: error.code, message: error.message });
}

/** The lock lost while the handler ran (`onLost: 'abort-request'`): 503 with Retry-After: 1. */
export function lostAnswer(error: LockLostError, context: ExecutionContext): Error {
  const message = `The lock "${error.lockName}" was lost while this request was being handled (${error.reason}), so its work may be incomplete. Retry.`;
  setHeader(context, 'Retry-After', '1');
  return new ServiceUnavailableException({ statusCode: 503, error: 'Service Unavailable', code: error.code, reason: error.reason, message });
}

/** Whether the request has been answered already (an HTTP response sent early, e.g. through @Res()): too late to answer otherwise. */
export function isAnswered(context: ExecutionContext): boolean {
  const response = httpResponse(context);
  return response?.headersSent === true || response?.sent === true || response?.raw?.headersSent === true;
}

interface HttpResponse {
  setHeader?(name: string, value: string): unknown;
  header?(name: string, value: string): unknown;
  /** Express (and Node's ServerResponse): the status line and headers are out. */
  headersSent?: boolean;
  /** Fastify's reply: the response was sent. */
  sent?: boolean;
  raw?: HttpResponse;
}

export function httpResponse(context: ExecutionContext): HttpResponse | undefined {
  return context.getType() === 'http' ? context.switchToHttp().getResponse<HttpResponse>() : undefined;
}

function setHeader(context: ExecutionContext, name: string, value: string): void {
  const response = httpResponse(context);
  if (typeof response?.setHeader === 'function') response.setHeader(name, value);
  else if (typeof response?.header === 'function') response.header(name, value);
}
