import { Module, type DynamicModule } from '@nestjs/common';
import { InMemoryLockStore } from '../memory/in-memory-lock-store.js';
import type { DistributedLockModuleOptions } from '../nest/distributed-lock-module.options.js';
import { DistributedLockModule } from '../nest/distributed-lock.module.js';
import { LockService } from '../nest/lock.service.js';

/** Options of the testing module: the module's options, minus where Redis is, plus the store to use. */
export type DistributedLockTestingOptions = Omit<DistributedLockModuleOptions, 'client' | 'connection' | 'env'> & {
  /** The store to use (default: a new, empty one). Share one to let several modules see the same locks. */
  store?: InMemoryLockStore;
};

/**
 * `DistributedLockModule` on an in-memory lock store, for unit tests that should not need Redis:
 * the same LockService, @DistributedLock, @ScheduledLock, interceptors, health indicator and
 * shutdown behaviour, with locks shared only inside this process. The store is provided too
 * (`moduleRef.get(InMemoryLockStore)`) to look at or clear the data.
 *
 * ```ts
 * const moduleRef = await Test.createTestingModule({
 *   imports: [DistributedLockTestingModule.forRoot(), OrdersModule],
 * }).compile();
 * ```
 * To keep an application module that imports `DistributedLockModule.forRoot()` as it is, override
 * the service instead: `.overrideProvider(LockService).useFactory({ factory: () => createInMemoryLockService() })`.
 */
@Module({})
export class DistributedLockTestingModule {
  static forRoot(options: DistributedLockTestingOptions = {}): DynamicModule {
    const { store = new InMemoryLockStore(), ...moduleOptions } = options;
    // Nothing is read from DISTRIBUTED_LOCK_* variables: a unit test must not depend on the machine's environment.
    const base = DistributedLockModule.forRoot({ ...moduleOptions, client: store, env: {} });
    return {
      ...base,
      providers: [...(base.providers ?? []), { provide: InMemoryLockStore, useValue: store }],
      exports: [...(base.exports ?? []), InMemoryLockStore],
    };
  }
}

/**
 * A LockService on an in-memory store (a new one unless given), to replace the real one in a test:
 * `.overrideProvider(LockService).useFactory({ factory: () => createInMemoryLockService() })`.
 * DistributedLockModule connects and closes it as it would the real one.
 */
export function createInMemoryLockService(options: DistributedLockTestingOptions = {}): LockService {
  const { store = new InMemoryLockStore(), ...serviceOptions } = options;
  return new LockService({ ...serviceOptions, client: store, env: {} });
}
