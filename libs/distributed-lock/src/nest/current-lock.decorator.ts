import { createParamDecorator } from '@nestjs/common';
import { getLockContext } from '../core/index.js';

/**
 * Handler parameter: the lock taken by @DistributedLock for this call (`name`, `token`, `signal`),
 * e.g. to pass the fencing token to a write. Undefined when the handler is not locked.
 */
export const CurrentLock = createParamDecorator(() => getLockContext()?.current);
