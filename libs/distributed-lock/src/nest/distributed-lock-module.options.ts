import type { Duration, LockClientOptions } from '../core/index.js';

/** Options of `DistributedLockModule.forRoot()` / `forRootAsync()`. Every field is optional. */
export interface DistributedLockModuleOptions extends LockClientOptions {
  /** Default waitTime of @DistributedLock (default `DISTRIBUTED_LOCK_WAIT_TIME` or 10 s). */
  defaultWaitTime?: Duration;
  /**
   * Run every incoming request (HTTP, RPC, WebSocket) in its own lock context, so that
   * `lock(name)` ... `unlock(name)` in one request pairs up, and another request is another owner
   * (default true). The context is opened by a global interceptor, so middleware and guards, which Nest
   * runs before interceptors, are outside it: a lock they take is an owner of its own, released through
   * its handle, and the handler does not re-enter it.
   */
  requestContext?: boolean;
  /** HTTP status when @DistributedLock does not get the lock within waitTime: 423 (default) or 409. */
  busyStatus?: 409 | 423;
  /**
   * On app.close(), how long to wait for decorated calls in flight (request handlers and provider
   * methods) to finish before their locks are released and the connections closed (default
   * `DISTRIBUTED_LOCK_SHUTDOWN_TIMEOUT` or 10 s; 0: do not wait).
   */
  shutdownTimeout?: Duration;
}

/**
 * A class that makes the module's options, for `forRootAsync({ useClass })` or `useExisting`:
 *
 * ```ts
 * @Injectable()
 * class LockConfig implements DistributedLockOptionsFactory {
 *   constructor(private readonly config: ConfigService) {}
 *   createDistributedLockOptions(): DistributedLockModuleOptions {
 *     return { connection: { mode: 'single', url: this.config.getOrThrow('LOCKS_REDIS_URL') } };
 *   }
 * }
 * ```
 */
export interface DistributedLockOptionsFactory {
  createDistributedLockOptions(): DistributedLockModuleOptions | Promise<DistributedLockModuleOptions>;
}

export const MODULE_ONLY_OPTION_KEYS = ['defaultWaitTime', 'requestContext', 'busyStatus', 'shutdownTimeout'] as const;
