import { BadRequestException, IntrinsicException, Logger, ServiceUnavailableException, type ExecutionContext } from '@nestjs/common';
import {
  InvalidLockArgumentError,
  LockAcquireTimeoutError,
  LockBackendError,
  LockClientClosedError,
  LockNameTemplateError,
  LockLostError,
} from '../core/index.js';
import { LockBusyException, retryAfterSeconds } from './lock-busy.exception.js';
import type { RequestCall } from './request-call.js';

/**
 * What the client of each transport receives when a decorated request handler cannot run, or finish,
 * under its lock (the table is in docs/guides/transports.md):
 * - HTTP (Express, Fastify): an HttpException: 423 (or 409) + Retry-After, 503 + Retry-After, 400.
 * - GraphQL: an error whose `extensions` carry the library's `code` and `retryAfterMs` (graphql-js
 *   copies an error's own `extensions` into the GraphQLError it reports, Apollo keeps its `code`).
 * - RPC: an RpcException carrying `{ status: 'error', code, message, retryAfterMs }`, which Nest's
 *   RPC layer sends to the client as the error. An @EventPattern handler has no client: its answer is
 *   an IntrinsicException, a failed handler for a transport that redelivers (Kafka), logged by no one
 *   but the interceptor.
 * - WebSocket: a WsException with the same object (Nest emits it as the `exception` event), and the
 *   same object as the reply of a message sent with an acknowledgement, which Nest would leave
 *   unanswered.
 * @nestjs/microservices and @nestjs/websockets are loaded only when a request of theirs needs an
 * answer, so an application without them never loads them. Nest logs none of these answers as an
 * error; the interceptor logs each at its own level.
 */

/** What went wrong with a request's lock: `error` is the library's own error. */
export type LockFailure =
  | { readonly kind: 'busy'; readonly error: LockAcquireTimeoutError }
  | { readonly kind: 'unavailable'; readonly error: LockBackendError | LockClientClosedError }
  | { readonly kind: 'bad-name'; readonly error: LockNameTemplateError | InvalidLockArgumentError }
  | { readonly kind: 'lost'; readonly error: LockLostError };

/** The failure a core error stands for, when the lock of a request fails with it. */
export function failureOf(error: unknown): LockFailure | undefined {
  if (error instanceof LockAcquireTimeoutError) return { kind: 'busy', error };
  if (error instanceof LockBackendError || error instanceof LockClientClosedError) return { kind: 'unavailable', error };
  // An InvalidLockArgumentError at call time is about what the name resolved to (an empty or too long
  // name, a semaphore name option naming several semaphores) or, rarely, a semaphore's stored size.
  if (error instanceof LockNameTemplateError || error instanceof InvalidLockArgumentError) return { kind: 'bad-name', error };
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

/** What a GraphQL, RPC or WebSocket client receives (GraphQL: in `extensions`, without status and message). */
interface LockFailureBody {
  status: 'error';
  code: string;
  message: string;
  /** When to retry: the busy lock's estimate, or 1 s for an unavailable store or a lost lock. */
  retryAfterMs?: number;
  /** Why a lock was lost (`lease-expired`, `not-owner`, `force-unlocked`, `client-closed`). */
  reason?: string;
}

/** A lock failure answered through a transport that passes an error's own fields on (GraphQL), or to nobody (an event). */
class LockAnswerException extends IntrinsicException {
  readonly extensions: Record<string, unknown>;

  constructor(readonly body: LockFailureBody) {
    super(body.message);
    const { status: _status, message: _message, ...extensions } = body;
    this.extensions = extensions;
  }
}

/** Busy: HTTP 423 (or 409) with Retry-After in seconds (the header) and `retryAfterMs` in the body; elsewhere `retryAfterMs`. */
export function busyAnswer(error: LockAcquireTimeoutError, context: ExecutionContext, status: 409 | 423): Promise<unknown> {
  const retryAfterMs = Math.max(1, Math.round(error.retryAfterMs));
  const message = `The resource is busy (lock "${error.lockName}" is held). Retry after ${retryAfterSeconds(retryAfterMs)} s.`;
  return answer(context, { status: 'error', code: error.code, message, retryAfterMs }, () => {
    setHeader(context, 'Retry-After', String(retryAfterSeconds(retryAfterMs)));
    return new LockBusyException(error.lockName, retryAfterMs, status);
  });
}

/** Redis unavailable (or the application shutting down): HTTP 503 with Retry-After: 1. */
export function unavailableAnswer(error: LockBackendError | LockClientClosedError, context: ExecutionContext, name: string): Promise<unknown> {
  const message = `The lock "${name}" could not be taken because its store is unavailable. Retry shortly.`;
  return answer(context, { status: 'error', code: error.code, message, retryAfterMs: 1000 }, () => {
    setHeader(context, 'Retry-After', '1');
    return new ServiceUnavailableException({ statusCode: 503, error: 'Service Unavailable', code: error.code, message });
  });
}

/** A lock name the request cannot fill (a template field missing), or a name that cannot be a lock name: HTTP 400. */
export function badNameAnswer(error: LockNameTemplateError | InvalidLockArgumentError, context: ExecutionContext): Promise<unknown> {
  return answer(
    context,
    { status: 'error', code: error.code, message: error.message },
    () => new BadRequestException({ statusCode: 400, error: 'Bad Request', code: error.code, message: error.message }),
  );
}

/** The lock lost while the handler ran (`onLost: 'abort-request'`): HTTP 503 with Retry-After: 1. */
export function lostAnswer(error: LockLostError, context: ExecutionContext): Promise<unknown> {
  const message = `The lock "${error.lockName}" was lost while this request was being handled (${error.reason}), so its work may be incomplete. Retry.`;
  return answer(context, { status: 'error', code: error.code, message, retryAfterMs: 1000, reason: error.reason }, () => {
    setHeader(context, 'Retry-After', '1');
    return new ServiceUnavailableException({ statusCode: 503, error: 'Service Unavailable', code: error.code, reason: error.reason, message });
  });
}

/** Whether the request has been answered already (an HTTP response sent early, e.g. through @Res()): too late to answer otherwise. */
export function isAnswered(context: ExecutionContext): boolean {
  const response = httpResponse(context);
  return response?.headersSent === true || response?.sent === true || response?.raw?.headersSent === true;
}

/** A message sent to an @EventPattern handler: no client waits for an answer. */
export function isEvent(context: ExecutionContext): boolean {
  return context.getType() === 'rpc' && Reflect.getMetadata(PATTERN_HANDLER_METADATA, context.getHandler()) === EVENT_HANDLER;
}

async function answer(context: ExecutionContext, body: LockFailureBody, http: () => Error): Promise<unknown> {
  switch (context.getType<string>()) {
    case 'http':
      return http();
    case 'rpc':
      return isEvent(context) ? new LockAnswerException(body) : new (await transportException('rpc'))(body);
    case 'ws': {
      const ack: unknown = context.getArgByIndex(2);
      if (typeof ack === 'function') ack(body);
      return new (await transportException('ws'))(body);
    }
    default: // 'graphql', and any other transport: the error's own fields
      return new LockAnswerException(body);
  }
}

/** @nestjs/microservices' PATTERN_HANDLER_METADATA and PatternHandler.EVENT, written out rather than imported. */
const PATTERN_HANDLER_METADATA = 'microservices:handler_type';
const EVENT_HANDLER = 2;
/** Variables, so that TypeScript and bundlers do not resolve the optional packages. */
const TRANSPORT_PACKAGES = { rpc: '@nestjs/microservices', ws: '@nestjs/websockets' } as const;
const TRANSPORT_CLASSES = { rpc: 'RpcException', ws: 'WsException' } as const;
type TransportException = new (error: object) => Error;
const loaded: Partial<Record<'rpc' | 'ws', Promise<TransportException>>> = {};

/** RpcException or WsException from the application's own copy of its package, loaded once, on first need. */
function transportException(type: 'rpc' | 'ws'): Promise<TransportException> {
  loaded[type] ??= import(TRANSPORT_PACKAGES[type]).then(
    (module: Record<string, unknown>) => module[TRANSPORT_CLASSES[type]] as TransportException,
    (error: unknown) => {
      // A request of this type came through that package, so it is installed; the library cannot see
      // it (a strict package manager that ignores optional peers?). The client then gets the
      // transport's "Internal server error", and the operator this line.
      new Logger('DistributedLock').warn(
        `${TRANSPORT_PACKAGES[type]} cannot be loaded from nestjs-distributed-lock (${(error as Error).message}); lock failures reach ${type.toUpperCase()} clients as "Internal server error".`,
      );
      return LockAnswerException as unknown as TransportException;
    },
  );
  return loaded[type];
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

function httpResponse(context: ExecutionContext): HttpResponse | undefined {
  return context.getType() === 'http' ? context.switchToHttp().getResponse<HttpResponse>() : undefined;
}

function setHeader(context: ExecutionContext, name: string, value: string): void {
  const response = httpResponse(context);
  if (typeof response?.setHeader === 'function') response.setHeader(name, value);
  else if (typeof response?.header === 'function') response.header(name, value);
}
