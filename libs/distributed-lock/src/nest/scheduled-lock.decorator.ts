import { InvalidLockArgumentError, type Duration } from '../core/index.js';
import { toMilliseconds, assertKnownKeys, isPlainObject } from '../core/internal.js';
import { lockDecorator } from './distributed-lock.decorator.js';
import { toLockMetadata, type DistributedLockMetadata, type OnBusy, type OnLost } from './distributed-lock.options.js';
import { LockNameTemplate } from './lock-name.resolver.js';

export interface ScheduledLockOptions {
  /**
   * Lock name: a fixed name or an `{args.N}` template. Default `schedule:<Class>.<method>`, the same
   * in every instance of the application.
   */
  name?: string;
  /**
   * The lease, as in every other decorator (ShedLock calls it lockAtMostFor): the lock is taken for
   * this long, without watchdog renewal, so a crashed or hung instance blocks the job for at most this
   * long. A run that lasts longer loses the lock (its signal aborts, a warning is logged) and another
   * instance may run. Omit it to let the watchdog renew the lease while the job runs.
   */
  leaseTime?: Duration;
  /**
   * Keep the lock at least this long after the run started, even if the run ends sooner (ShedLock's
   * lockAtLeastFor), so that instances whose clocks or ticks drift by less than this skip the same
   * tick. Shorter than the schedule's period, and than leaseTime.
   */
  lockAtLeastFor?: Duration;
  /** What a skipped tick resolves (default `'skip'`: undefined, the method does not run). */
  onBusy?: OnBusy;
  /** When a run outlasts leaseTime (default: its signal aborts and a warning is logged); see OnLost. */
  onLost?: OnLost;
}

const OPTION_KEYS = ['name', 'leaseTime', 'lockAtLeastFor', 'onBusy', 'onLost'] as const;

/**
 * A scheduled job (`@Cron`, `@Interval`, a queue consumer...) that runs in one instance only per
 * tick: the lock is tried without waiting, and an instance that finds it held skips the run. While
 * Redis does not answer, every instance skips its runs (fail closed), and the outage is logged once
 * when it starts and once when it ends, with the number of runs skipped, instead of an error per tick.
 *
 * ```ts
 * @Cron(CronExpression.EVERY_MINUTE)
 * @ScheduledLock({ leaseTime: '50s', lockAtLeastFor: '10s' })
 * async report() { ... }
 * ```
 */
export function ScheduledLock(options: ScheduledLockOptions = {}): MethodDecorator {
  if (!isPlainObject(options)) throw new InvalidLockArgumentError('@ScheduledLock options', 'expected an options object.');
  assertKnownKeys(options, OPTION_KEYS, '@ScheduledLock options');
  if (options.leaseTime !== undefined) toMilliseconds(options.leaseTime, 'leaseTime', { min: 10 });
  if (options.name !== undefined) {
    if (typeof options.name !== 'string' || options.name.trim() === '') {
      throw new InvalidLockArgumentError('@ScheduledLock name', 'expected a non-empty string: a fixed name or an {args.N} template.');
    }
    if (new LockNameTemplate(options.name).source === 'request') {
      throw new InvalidLockArgumentError(
        '@ScheduledLock name',
        `"${options.name}" reads a request, which a scheduled run does not have; use a fixed name or {args.N}.`,
      );
    }
  }
  return (target, propertyKey, descriptor) => {
    const className = typeof target === 'function' ? target.name : target.constructor.name;
    const metadata: DistributedLockMetadata = {
      ...toLockMetadata(
        {
          name: options.name ?? `schedule:${className}.${String(propertyKey)}`,
          leaseTime: options.leaseTime,
          lockAtLeastFor: options.lockAtLeastFor,
          waitTime: 0,
          onBusy: options.onBusy ?? 'skip',
          ...(options.onLost === undefined ? {} : { onLost: options.onLost }),
        },
        undefined,
        '@ScheduledLock',
      ),
      // Redis down: the tick is skipped (fail closed) and counted in the outage log, not thrown at the scheduler.
      onUnavailable: 'skip',
    };
    return lockDecorator(metadata)(target, propertyKey, descriptor);
  };
}
