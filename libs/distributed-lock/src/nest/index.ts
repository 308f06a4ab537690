export { DistributedLockModule } from './distributed-lock.module.js';
export { DISTRIBUTED_LOCK_MODULE_OPTIONS } from './distributed-lock.module-definition.js';
export type { DistributedLockModuleOptions } from './distributed-lock-module.options.js';
export { LockService, type LockServiceSettings } from './lock.service.js';
export { DistributedLock } from './distributed-lock.decorator.js';
export type {
  DistributedLockOptions,
  DistributedLockArgsOptions,
  LockNameFactory,
  LockNameFromArgs,
  LockBusyInfo,
  LockedMethodDecorator,
  OnBusy,
} from './distributed-lock.options.js';
export { ScheduledLock, type ScheduledLockOptions } from './scheduled-lock.decorator.js';
export {
  DistributedLockHealthIndicator,
  type LockHealthCheck,
  type LockHealthDetails,
  type LockHealthOptions,
  type LockHealthResult,
} from './distributed-lock.health-indicator.js';
export { DistributedLockExplorer } from './distributed-lock.explorer.js';
export { DistributedLockRunner } from './distributed-lock.runner.js';
export { DistributedLockInterceptor } from './distributed-lock.interceptor.js';
export { LockContextInterceptor } from './lock-context.interceptor.js';
export { LockBusyException } from './lock-busy.exception.js';
export { CurrentLock } from './current-lock.decorator.js';
export { DistributedSemaphore, type DistributedSemaphoreOptions, type DistributedSemaphoreArgsOptions } from './distributed-semaphore.decorator.js';
export { Leader, type LeaderOptions } from './leader.decorator.js';
export { LeaderExplorer } from './leader.explorer.js';
// Lock-lost handling of decorated calls
export type { LockLostInfo, OnLost } from './distributed-lock.options.js';
