import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { DistributedLockModuleOptions } from './distributed-lock-module.options.js';

export const {
  ConfigurableModuleClass: ConfigurableDistributedLockModule,
  MODULE_OPTIONS_TOKEN: DISTRIBUTED_LOCK_MODULE_OPTIONS,
  OPTIONS_TYPE: DISTRIBUTED_LOCK_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: DISTRIBUTED_LOCK_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<DistributedLockModuleOptions>({ moduleName: 'DistributedLock' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createDistributedLockOptions')
  // Global by default: @DistributedLock's interceptor needs LockService in every module that uses it.
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();
