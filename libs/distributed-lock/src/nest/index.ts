export { DistributedLockModule } from './distributed-lock.module.js';
export type { DistributedLockModuleOptions, DistributedLockOptionsFactory } from './distributed-lock-module.options.js';
export { LockService } from './lock.service.js';
export { DistributedLock } from './distributed-lock.decorator.js';
export type {
  DistributedLockOptions,
  DistributedLockArgsOptions,
  DecoratedLockKind,
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
// Subclassed to scope names and change the answers (see docs/guides/decorator.md), as throttler's guard.
export { DistributedLockInterceptor } from './distributed-lock.interceptor.js';
export { LockBusyException } from './lock-busy.exception.js';
export { CurrentLock } from './current-lock.decorator.js';
export { DistributedSemaphore, type DistributedSemaphoreOptions, type DistributedSemaphoreArgsOptions } from './distributed-semaphore.decorator.js';
export { Leader, type LeaderOptions } from './leader.decorator.js';
// Lock-lost handling of decorated calls
export type { LockLostInfo, OnLost } from './distributed-lock.options.js';
