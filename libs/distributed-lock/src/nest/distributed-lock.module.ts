import { Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import type { DistributedLockModuleOptions } from './distributed-lock-module.options.js';
import {
  ConfigurableDistributedLockModule,
  DISTRIBUTED_LOCK_ASYNC_OPTIONS_TYPE,
  DISTRIBUTED_LOCK_MODULE_OPTIONS,
  DISTRIBUTED_LOCK_OPTIONS_TYPE,
} from './distributed-lock.module-definition.js';
import { DistributedLockInterceptor } from './distributed-lock.interceptor.js';
import { LockContextInterceptor } from './lock-context.interceptor.js';
import { LockService } from './lock.service.js';

async function createLockService(options: DistributedLockModuleOptions | undefined): Promise<LockService> {
  const service = new LockService(options ?? {});
  await service.connect();
  return service;
}

/**
 * Distributed locks for a Nest application.
 *
 * ```ts
 * DistributedLockModule.forRoot()                       // everything from REDIS_* / LOCK_* variables
 * DistributedLockModule.forRoot({ connection: { mode: 'single', host: 'redis', port: 6379 } })
 * DistributedLockModule.forRootAsync({ inject: [ConfigService], useFactory: (c) => ({ ... }) })
 * ```
 * Connects at start-up (a clear LockConnectionError if Redis is unreachable, unless lazyConnect),
 * and on shutdown stops renewals, releases held locks and closes its connections.
 */
@Module({
  providers: [
    { provide: LockService, useFactory: createLockService, inject: [DISTRIBUTED_LOCK_MODULE_OPTIONS] },
    DistributedLockInterceptor,
    { provide: APP_INTERCEPTOR, useClass: LockContextInterceptor },
  ],
  exports: [LockService, DistributedLockInterceptor],
})
export class DistributedLockModule extends ConfigurableDistributedLockModule implements OnApplicationShutdown {
  constructor(private readonly locks: LockService) {
    super();
  }

  static forRoot(options: typeof DISTRIBUTED_LOCK_OPTIONS_TYPE = {}): DynamicModule {
    return super.forRoot(options);
  }

  static forRootAsync(options: typeof DISTRIBUTED_LOCK_ASYNC_OPTIONS_TYPE): DynamicModule {
    return super.forRootAsync(options);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.locks.close();
  }
}
