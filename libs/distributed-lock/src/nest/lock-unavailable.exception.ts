import { HttpException } from '@nestjs/common';

/**
 * @DistributedLock could not get its lock within waitTime. 423 Locked (or 409 Conflict, per module
 * option), with `Retry-After` set from the holder's remaining lease.
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
