import { Module, type BeforeApplicationShutdown, type DynamicModule, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { APP_INTERCEPTOR, DiscoveryModule } from '@nestjs/core';
import type { DistributedLockModuleOptions } from './distributed-lock-module.options.js';
import {
  ConfigurableDistributedLockModule,
  DISTRIBUTED_LOCK_ASYNC_OPTIONS_TYPE,
  DISTRIBUTED_LOCK_MODULE_OPTIONS,
  DISTRIBUTED_LOCK_OPTIONS_TYPE,
} from './distributed-lock.module-definition.js';
import { DistributedLockExplorer } from './distributed-lock.explorer.js';
import { DistributedLockHealthIndicator } from './distributed-lock.health-indicator.js';
import { DistributedLockInterceptor, LockContextInterceptor } from './distributed-lock.interceptor.js';
import { DistributedLockRunner } from './distributed-lock.runner.js';
import { LeaderExplorer } from './leader.explorer.js';
import { LockService } from './lock.service.js';

/** Validates the options at once (a bad setting fails while the module graph is built); connects later. */
function createLockService(options: DistributedLockModuleOptions | undefined): LockService {
  return new LockService(options ?? {});
}

/**
 * Distributed locks for a Nest application.
 *
 * ```ts
 * DistributedLockModule.forRoot()                       // everything from DISTRIBUTED_LOCK_* variables
 * DistributedLockModule.forRoot({ connection: { mode: 'single', host: 'redis', port: 6379 } })
 * DistributedLockModule.forRootAsync({ inject: [ConfigService], useFactory: (c) => ({ ... }) })
 * ```
 * Connects during module initialisation (a clear LockConnectionError if Redis is unreachable, unless
 * lazyConnect), not while the graph is built: if another provider fails to resolve, no socket is left
 * open. At start-up it also finds the decorated methods of every provider (DistributedLockExplorer).
 * On shutdown it first waits (up to shutdownTimeout) for decorated calls in flight, then stops
 * renewals, releases held locks and closes its connections.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    { provide: LockService, useFactory: createLockService, inject: [DISTRIBUTED_LOCK_MODULE_OPTIONS] },
    DistributedLockRunner,
    DistributedLockExplorer,
    DistributedLockInterceptor,
    DistributedLockHealthIndicator,
    { provide: APP_INTERCEPTOR, useClass: LockContextInterceptor },
    LeaderExplorer,
  ],
  exports: [LockService, DistributedLockRunner, DistributedLockInterceptor, DistributedLockHealthIndicator],
})
export class DistributedLockModule extends ConfigurableDistributedLockModule implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  /** @internal Nest makes the module. */
  constructor(
    private readonly locks: LockService,
    private readonly runner: DistributedLockRunner,
  ) {
    super();
  }

  static forRoot(options: typeof DISTRIBUTED_LOCK_OPTIONS_TYPE = {}): DynamicModule {
    return super.forRoot(options);
  }

  static forRootAsync(options: typeof DISTRIBUTED_LOCK_ASYNC_OPTIONS_TYPE): DynamicModule {
    return super.forRootAsync(options);
  }

  async onModuleInit(): Promise<void> {
    await Promise.all([this.locks.connect(), this.runner.init()]);
  }

  /**
   * Decorated calls in flight finish first, while the HTTP server still answers, and locks kept for
   * lockAtLeastFor are released: both within what the leaders' resignation (Nest runs the providers'
   * hooks first) left of shutdownTimeout.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.runner.drain(this.locks.shutdownTimeLeft());
  }

  /** The client closes: within the operation timeout, plus up to 1 s for its connections (see LockClient.close). */
  async onApplicationShutdown(): Promise<void> {
    await this.locks.close();
  }
}
