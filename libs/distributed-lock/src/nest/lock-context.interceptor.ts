import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { getLockContext, runInNewLockContext } from '../core/internal.js';
import { LockService } from './lock.service.js';

/**
 * Registered globally by DistributedLockModule: runs each incoming request in its own lock context,
 * the Node counterpart of Redisson's thread. `lock(name)` and `unlock(name)` in one request then
 * refer to the same owner; concurrent requests are different owners.
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
