import { Logger } from '@nestjs/common';
import { describePubSubChoice, configDuration } from '../core/internal.js';
import { InvalidLockConfigError, LockClient } from '../core/index.js';
import { MODULE_ONLY_OPTION_KEYS, type DistributedLockModuleOptions } from './distributed-lock-module.options.js';
import { OutageLog } from './outage-log.js';

export interface LockServiceSettings {
  defaultWaitMs: number;
  requestContext: boolean;
  busyStatus: 409 | 423;
  /** How long app.close() waits for decorated calls in flight before releasing their locks. */
  shutdownTimeoutMs: number;
}

export const DEFAULT_DECORATOR_WAIT_MS = 10_000;
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;
/** A renewal that takes longer than this share of the lease leaves too little margin: warn. */
const SLOW_RENEWAL_SHARE = 1 / 3;

/**
 * The injectable lock API: everything `LockClient` offers (lock, tryLock, unlock, withLock, ...),
 * connected at start-up and closed on application shutdown by DistributedLockModule. Lost leases and
 * background Redis failures are logged through the Nest Logger (never owner ids or tokens).
 */
export class LockService extends LockClient {
  /** @internal The module's settings, as the Nest layer reads them. */
  readonly settings: LockServiceSettings;
  private readonly logger = new Logger('DistributedLock');
  /** @internal Failures during a Redis outage, logged once when it starts and once when it ends. */
  readonly outage: OutageLog;
  private shutdownEndsAt: number | undefined;

  constructor(options: DistributedLockModuleOptions = {}) {
    const { defaultWaitTime, requestContext, busyStatus, shutdownTimeout, ...clientOptions } = options ?? {};
    super(clientOptions, MODULE_ONLY_OPTION_KEYS);
    const env = options?.env ?? process.env;
    if (busyStatus !== undefined && busyStatus !== 409 && busyStatus !== 423) {
      throw new InvalidLockConfigError('busyStatus', `expected 409 or 423, got ${String(busyStatus)}.`);
    }
    this.settings = {
      defaultWaitMs: configDuration(defaultWaitTime, 'defaultWaitTime', env, 'DISTRIBUTED_LOCK_WAIT_TIME', DEFAULT_DECORATOR_WAIT_MS, 0),
      requestContext: requestContext ?? true,
      busyStatus: busyStatus ?? 423,
      shutdownTimeoutMs: configDuration(shutdownTimeout, 'shutdownTimeout', env, 'DISTRIBUTED_LOCK_SHUTDOWN_TIMEOUT', DEFAULT_SHUTDOWN_TIMEOUT_MS, 0),
    };
    this.events.on('pubsub', (choice) => this.logger.log(`Unlock notifications: ${describePubSubChoice(choice)}`));
    this.events.on('lost', ({ name, reason, heldMs }) =>
      this.logger.warn(`Lock "${name}" was lost after ${Math.round(heldMs)} ms (${reason}); the work it protected may overlap with another holder.`),
    );
    this.events.on('renewed', ({ name, leaseMs, tookMs }) => {
      if (tookMs > leaseMs * SLOW_RENEWAL_SHARE) {
        this.logger.warn(
          `Renewing lock "${name}" took ${Math.round(tookMs)} ms, over a third of its ${leaseMs} ms lease; a slower one may lose it. Check Redis latency and event-loop stalls.`,
        );
      }
    });
    this.outage = new OutageLog(this.logger, this.events, this.clock);
    this.events.on('background-error', ({ operation, name, error }) => {
      if (operation === 'close') this.logger.warn(error.message);
      else if (operation === 'connection') this.outage.failed(`Redis connection to ${this.target}`, error);
      else this.outage.failed(`background ${operation}`, error, name);
    });
    this.onConnectionReady(() => this.outage.recovered());
  }

  /**
   * @internal What is left of shutdownTimeout, counted from the first shutdown hook that asks: the
   * leaders' resignation and the decorated calls' drain share it (each with its own timeout, a leader
   * that kept the whole of it made app.close() wait twice as long as documented).
   */
  shutdownTimeLeft(): number {
    this.shutdownEndsAt ??= this.clock.now() + this.settings.shutdownTimeoutMs;
    return Math.max(0, this.shutdownEndsAt - this.clock.now());
  }
}
