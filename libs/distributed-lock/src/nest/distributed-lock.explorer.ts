import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { ApplicationConfig, DiscoveryService, MetadataScanner } from '@nestjs/core';
import { DISTRIBUTED_LOCK_METADATA, type DistributedLockMetadata } from './distributed-lock.options.js';
import { assertKeyFitsHandler } from './request-name.check.js';
import { bindLockedInstance, DistributedLockRunner } from './distributed-lock.runner.js';
import { isLockedMethod } from './locked-method.js';

/**
 * Finds, at start-up, every provider and controller with a method decorated by @DistributedLock or
 * @ScheduledLock (DiscoveryService + MetadataScanner, as @nestjs/schedule finds @Cron) and binds the
 * instance to this application's DistributedLockRunner, so that its decorated methods lock through this
 * application's Redis connection. The methods themselves were wrapped when their class was defined.
 */
@Injectable()
export class DistributedLockExplorer implements OnModuleInit {
  private readonly logger = new Logger('DistributedLock');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly runner: DistributedLockRunner,
    private readonly config: ApplicationConfig,
  ) {}

  onModuleInit(): void {
    this.explore();
  }

  /**
   * Binds every instance with a locked method. Checks, on the way, that the keys of request
   * handlers (routes, resolvers, message patterns, gateway messages) and scheduled jobs read only
   * what their requests carry (request-name.check.ts).
   */
  private explore(): void {
    const globalPrefix = this.config.getGlobalPrefix();
    for (const wrapper of [...this.discovery.getControllers(), ...this.discovery.getProviders()]) {
      const instance: unknown = wrapper.instance;
      if (!instance || typeof instance !== 'object') continue;
      const prototype: unknown = Object.getPrototypeOf(instance);
      if (!prototype || prototype === Object.prototype) continue;
      const locked = this.scanner.getAllMethodNames(prototype).filter((name) => isLockedMethod((prototype as Record<string, unknown>)[name]));
      if (locked.length === 0) continue;
      for (const name of locked) {
        const handler = (prototype as Record<string, object>)[name]!;
        const metadata = Reflect.getMetadata(DISTRIBUTED_LOCK_METADATA, handler) as DistributedLockMetadata;
        assertKeyFitsHandler(handler, metadata, { controller: wrapper.metatype as object, module: wrapper.host?.metatype, globalPrefix });
      }
      if (!wrapper.isDependencyTreeStatic()) {
        this.logger.warn(
          `${wrapper.name} is request-scoped (or depends on one): ${locked.join(', ')} lock when Nest calls them as request handlers, but a call from other code fails with LOCK_INVALID_CONFIG.`,
        );
        continue;
      }
      bindLockedInstance(instance, this.runner);
    }
  }
}
