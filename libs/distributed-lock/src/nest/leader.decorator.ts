import { SetMetadata } from '@nestjs/common';
import { InvalidLockArgumentError, type Duration } from '../core/index.js';
import { describe, toMilliseconds, assertKnownKeys, assertLockName, isPlainObject } from '../core/internal.js';

/** Metadata key under which @Leader stores its options on a method. */
export const LEADER_METADATA = 'nestjs-distributed-lock:leader';

export interface LeaderOptions {
  /** The election's name, the same in every instance (default `<Class>.<method>`). */
  name?: string;
  /** After the method returned or failed, how long before this instance stands again (default 1 s). */
  standAgainAfter?: Duration;
}

/** What @Leader stores: the election's name, checked, and where it was put. */
export interface LeaderMetadata {
  readonly name: string;
  readonly standAgainAfterMs: number | undefined;
  /** `Class.method`, for logs. */
  readonly where: string;
}

/**
 * Runs the decorated provider method on exactly one instance of the application at a time: the
 * leader of the election `name`. Every instance stands when the application has started
 * (onApplicationBootstrap); the one elected calls the method with its `Leadership` (the term, a
 * fencing token; `signal`, aborted when the term ends; `isLeader`, `throwIfLost()`), and leads as
 * long as the method runs (Curator's LeaderSelector). When it returns or throws, the instance steps
 * down, another takes over at once, and it stands again after `standAgainAfter`. When the instance
 * dies or pauses, another takes over within the lease (watchdogTimeout). On `app.close()` the
 * signal aborts, the method is awaited (up to shutdownTimeout) and the leadership goes to a waiting
 * instance at once.
 *
 * ```ts
 * @Leader('restock-worker')
 * async run(leadership: Leadership) {
 *   while (!leadership.signal.aborted) { leadership.throwIfLost(); await this.step(leadership.term); }
 * }
 * ```
 */
export function Leader(nameOrOptions: string | LeaderOptions = {}): MethodDecorator {
  const options: LeaderOptions = typeof nameOrOptions === 'string' ? { name: nameOrOptions } : nameOrOptions;
  if (!isPlainObject(options)) throw new InvalidLockArgumentError('@Leader options', `expected a name or { name, standAgainAfter }, got ${describe(options)}.`);
  assertKnownKeys(options, ['name', 'standAgainAfter'], '@Leader options');
  if (options.name !== undefined) assertLockName(options.name, '@Leader name');
  const standAgainAfterMs = options.standAgainAfter === undefined ? undefined : toMilliseconds(options.standAgainAfter, 'standAgainAfter', { min: 0 });
  return (target, propertyKey, descriptor) => {
    const where = `${typeof target === 'function' ? target.name : target.constructor.name}.${String(propertyKey)}`;
    if (typeof descriptor.value !== 'function') throw new InvalidLockArgumentError('@Leader', `${where} is not a method; put @Leader on a method.`);
    const metadata: LeaderMetadata = { name: typeof options.name === 'string' ? options.name : where, standAgainAfterMs, where };
    SetMetadata(LEADER_METADATA, metadata)(target, propertyKey, descriptor);
    return descriptor;
  };
}
