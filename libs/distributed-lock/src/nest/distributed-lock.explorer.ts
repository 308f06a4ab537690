import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { LockCallRuntime } from './lock-call.runtime.js';
import { bindLockedInstance, isLockedMethod } from './locked-method.js';

/**
 * Finds, at start-up, every provider and controller with a method decorated by @DistributedLock or
 * @ScheduledLock (DiscoveryService + MetadataScanner, as @nestjs/schedule finds @Cron) and binds the
 * instance to this application's LockCallRuntime, so that its decorated methods lock through this
 * application's Redis connection. The methods themselves were wrapped when their class was defined.
 */
@Injectable()
export class DistributedLockExplorer implements OnModuleInit {
  private readonly logger = new Logger('DistributedLock');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly runtime: LockCallRuntime,
  ) {}

  onModuleInit(): void {
    this.explore();
  }

  /** Binds every instance with a locked method; returns how many methods were found. */
  explore(): number {
    let found = 0;
    for (const wrapper of [...this.discovery.getControllers(), ...this.discovery.getProviders()]) {
      const instance: unknown = wrapper.instance;
      if (!instance || typeof instance !== 'object') continue;
      const prototype: unknown = Object.getPrototypeOf(instance);
      if (!prototype || prototype === Object.prototype) continue;
      const locked = this.scanner
        .getAllMethodNames(prototype)
        .filter((name) => isLockedMethod((prototype as Record<string, unknown>)[name]));
      if (locked.length === 0) continue;
      if (!wrapper.isDependencyTreeStatic()) {
        this.logger.warn(
          `${wrapper.name}: ${locked.join(', ')} cannot be locked because ${wrapper.name} is request-scoped (or depends on one); decorated calls on it fail with LOCK_INVALID_CONFIG.`,
        );
        continue;
      }
      bindLockedInstance(instance, this.runtime);
      found += locked.length;
    }
    return found;
  }
}
