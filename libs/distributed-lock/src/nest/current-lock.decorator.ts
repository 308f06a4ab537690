import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { getLockContext } from '../core/index.js';
import { DISTRIBUTED_LOCK_METADATA } from './distributed-lock.constants.js';

/**
 * Stands for the lock of a decorated handler while its parameters are resolved (before the lock is
 * taken); the method wrapper replaces it with the handle when it calls the handler.
 */
export const CURRENT_LOCK_PENDING: unique symbol = Symbol('the @DistributedLock of this call, once taken');

/**
 * Handler parameter: the lock taken by @DistributedLock for this call (`name`, `token`, `signal`,
 * `throwIfLost()`), e.g. to pass the fencing token to a write. On a handler without the decorator,
 * the lock of the innermost `withLock` or decorated call around the request, if any.
 */
export const CurrentLock = createParamDecorator((_data: unknown, context: ExecutionContext) =>
  Reflect.getMetadata(DISTRIBUTED_LOCK_METADATA, context.getHandler()) !== undefined ? CURRENT_LOCK_PENDING : getLockContext()?.current,
);
