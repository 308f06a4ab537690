import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { getLockContext } from '../core/internal.js';
import { DISTRIBUTED_LOCK_METADATA } from './distributed-lock.options.js';
import { CURRENT_LOCK_PENDING } from './request-call.js';

/**
 * Handler parameter: the lock taken by @DistributedLock for this call (`name`, `token`, `signal`,
 * `throwIfLost()`), e.g. to pass the fencing token to a write. On a handler without the decorator,
 * the lock of the innermost `withLock` or decorated call around the request, if any.
 */
export const CurrentLock = createParamDecorator((_data: unknown, context: ExecutionContext) =>
  Reflect.getMetadata(DISTRIBUTED_LOCK_METADATA, context.getHandler()) !== undefined ? CURRENT_LOCK_PENDING : getLockContext()?.current,
);
