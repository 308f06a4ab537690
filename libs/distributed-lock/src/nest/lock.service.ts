import { Logger } from '@nestjs/common';
import { InvalidLockConfigError, LockClient } from '../core/index.js';
import { configDuration } from '../core/config/resolve-lock-client-options.js';
import { MODULE_ONLY_OPTION_KEYS, type DistributedLockModuleOptions } from './distributed-lock-module.options.js';

export interface LockServiceSettings {
  defaultWaitMs: number;
  requestContext: boolean;
  unavailableStatus: 409 | 423;
}

export const DEFAULT_DECORATOR_WAIT_MS = 10_000;
/** Connection errors repeat on every reconnect attempt; log them at most this often. */
const CONNECTION_LOG_INTERVAL_MS = 10_000;

/**
 * The injectable lock API: everything `LockClient` offers (lock, tryLock, unlock, withLock, ...),
 * connected at start-up and closed on application shutdown by DistributedLockModule. Lost leases and
 * background Redis failures are logged through the Nest Logger (never owner ids or tokens).
 */
export class LockService extends LockClient {
  readonly settings: LockServiceSettings;
  private readonly logger = new Logger('DistributedLock');
  private lastConnectionLog = -Infinity;

  constructor(options: DistributedLockModuleOptions = {}) {
    const { defaultWaitTime, requestContext, unavailableStatus, ...clientOptions } = options ?? {};
    super(clientOptions, MODULE_ONLY_OPTION_KEYS);
    const env = options?.env ?? process.env;
    if (unavailableStatus !== undefined && unavailableStatus !== 409 && unavailableStatus !== 423) {
      throw new InvalidLockConfigError('unavailableStatus', `expected 409 or 423, got ${String(unavailableStatus)}.`);
    }
    this.settings = {
      defaultWaitMs: configDuration(defaultWaitTime, 'defaultWaitTime', env, 'LOCK_WAIT_TIME', DEFAULT_DECORATOR_WAIT_MS, 0),
      requestContext: requestContext ?? true,
      unavailableStatus: unavailableStatus ?? 423,
    };
    this.events.on('lost', ({ name, reason, heldMs }) =>
      this.logger.warn(`Lock "${name}" was lost after ${Math.round(heldMs)} ms (${reason}); the work it protected may overlap with another holder.`),
    );
    this.events.on('background-error', ({ operation, name, error }) => {
      if (operation === 'connection') {
        const now = performance.now();
        if (now - this.lastConnectionLog < CONNECTION_LOG_INTERVAL_MS) return;
        this.lastConnectionLog = now;
        this.logger.warn(`Redis connection (${name ?? 'lock'}) to ${this.target}: ${error.message}`);
        return;
      }
      this.logger.warn(`Background ${operation}${name ? ` of lock "${name}"` : ''} failed: ${error.message}`);
    });
  }
}
