import { HttpException } from '@nestjs/common';

/**
 * An HTTP request's @DistributedLock could not get its lock within waitTime: 423 Locked (or 409
 * Conflict, per module option `unavailableStatus`), with `Retry-After` estimated from how long the
 * lock's recent holds lasted, never later than the holder's remaining lease. (The name predates the
 * other transports' answers, see lock-failure.answers.ts; "unavailable" here means busy.)
 */
export class LockUnavailableException extends HttpException {
  constructor(
    readonly lockName: string,
    readonly retryAfterSeconds: number,
    status: 409 | 423,
  ) {
    super(
      {
        statusCode: status,
        error: status === 423 ? 'Locked' : 'Conflict',
        code: 'LOCK_ACQUIRE_TIMEOUT',
        message: `The resource is busy (lock "${lockName}" is held). Retry after ${retryAfterSeconds} s.`,
        retryAfter: retryAfterSeconds,
      },
      status,
    );
  }
}
