import { HttpException } from '@nestjs/common';

/**
 * What an HTTP client receives when a decorated handler's lock stayed busy for its whole waitTime:
 * 423 Locked (or 409 Conflict, per module option `busyStatus`), the header `Retry-After` in whole
 * seconds (HTTP's unit), and the body `{ statusCode, error, code: 'LOCK_ACQUIRE_TIMEOUT', message,
 * retryAfterMs }` in milliseconds, as every other duration of the library and every other transport's
 * answer. The estimate comes from how long the lock's recent holds lasted, and is never later than
 * the holder's remaining lease. Catch it in an exception filter to answer otherwise.
 */
export class LockBusyException extends HttpException {
  constructor(
    /** The busy lock's name (names joined with ', ' for a multi-lock). */
    readonly lockName: string,
    /** When to retry, in milliseconds (at least 1). */
    readonly retryAfterMs: number,
    status: 409 | 423,
  ) {
    super(
      {
        statusCode: status,
        error: status === 423 ? 'Locked' : 'Conflict',
        code: 'LOCK_ACQUIRE_TIMEOUT',
        message: `The resource is busy (lock "${lockName}" is held). Retry after ${retryAfterSeconds(retryAfterMs)} s.`,
        retryAfterMs,
      },
      status,
    );
  }
}

/** The `Retry-After` header's value for a wait in milliseconds: whole seconds, at least 1. */
export function retryAfterSeconds(retryAfterMs: number): number {
  return Math.max(1, Math.ceil(retryAfterMs / 1000));
}
