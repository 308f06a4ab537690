export { DistributedLockModule } from './distributed-lock.module.js';
export { DISTRIBUTED_LOCK_MODULE_OPTIONS } from './distributed-lock.module-definition.js';
export type { DistributedLockModuleOptions } from './distributed-lock-module.options.js';
export { LockService, type LockServiceSettings } from './lock.service.js';
export { DistributedLock, type DistributedLockOptions, type LockKeyFactory } from './distributed-lock.decorator.js';
export { DistributedLockInterceptor } from './distributed-lock.interceptor.js';
export { LockContextInterceptor } from './lock-context.interceptor.js';
export { LockUnavailableException } from './lock-unavailable.exception.js';
export { CurrentLock } from './current-lock.decorator.js';
