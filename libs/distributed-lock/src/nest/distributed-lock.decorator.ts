import { applyDecorators, SetMetadata, UseInterceptors, type ExecutionContext } from '@nestjs/common';
import { InvalidLockArgumentError, type Duration } from '../core/index.js';
import { leaseMs, waitMs } from '../core/locks/acquire-options.js';
import { describe } from '../core/util/duration.js';
import { assertKnownKeys, isPlainObject } from '../core/util/validate.js';
import { DISTRIBUTED_LOCK_METADATA } from './distributed-lock.constants.js';
import { DistributedLockInterceptor } from './distributed-lock.interceptor.js';
import { LockKeyTemplate } from './lock-key.template.js';

/** Builds the lock name from the execution context (request, RPC payload...). */
export type LockKeyFactory = (context: ExecutionContext) => string;

export interface DistributedLockOptions {
  /**
   * Lock name: a literal (`'goods'`), a template over the request (`'product:{params.id}'`; roots
   * params, query, body, user, headers, and data for RPC/WebSocket), or a function of the context.
   */
  key: string | LockKeyFactory;
  /** Lease; omit it to let the watchdog renew the lock while the handler runs. */
  leaseTime?: Duration;
  /** How long to wait for the lock before answering 423 (default: module defaultWaitTime, 10 s). */
  waitTime?: Duration;
}

/** What the interceptor reads: checked and parsed once, when the class is defined. */
export interface DistributedLockSpec {
  key: LockKeyTemplate | LockKeyFactory;
  leaseMs: number | undefined;
  waitMs: number | undefined;
}

const OPTION_KEYS = ['key', 'leaseTime', 'waitTime'] as const;

/**
 * Runs the decorated handler under a distributed lock: acquired before it, released after its
 * promise or observable settles (success, error, or unsubscription). When the lock is not acquired
 * within waitTime the client gets 423 Locked with Retry-After; errors of the handler pass unchanged.
 *
 * ```ts
 * @DistributedLock('goods', '5s')
 * @DistributedLock({ key: 'product:{params.id}', waitTime: '2s' })
 * ```
 */
export function DistributedLock(key: string | LockKeyFactory, leaseTime?: Duration): MethodDecorator;
export function DistributedLock(options: DistributedLockOptions): MethodDecorator;
export function DistributedLock(keyOrOptions: string | LockKeyFactory | DistributedLockOptions, leaseTime?: Duration): MethodDecorator {
  const spec = compileSpec(keyOrOptions, leaseTime);
  return applyDecorators(SetMetadata(DISTRIBUTED_LOCK_METADATA, spec), UseInterceptors(DistributedLockInterceptor));
}

export function compileSpec(keyOrOptions: unknown, leaseTime?: Duration): DistributedLockSpec {
  if (isPlainObject(keyOrOptions)) {
    if (leaseTime !== undefined) {
      throw new InvalidLockArgumentError('leaseTime', 'give it inside the @DistributedLock options object.');
    }
    assertKnownKeys(keyOrOptions, OPTION_KEYS, '@DistributedLock options');
    return {
      key: compileKey(keyOrOptions.key),
      leaseMs: keyOrOptions.leaseTime === undefined ? undefined : leaseMs(keyOrOptions.leaseTime),
      waitMs: keyOrOptions.waitTime === undefined ? undefined : waitMs(keyOrOptions.waitTime),
    };
  }
  return { key: compileKey(keyOrOptions), leaseMs: leaseTime === undefined ? undefined : leaseMs(leaseTime), waitMs: undefined };
}

function compileKey(key: unknown): LockKeyTemplate | LockKeyFactory {
  if (typeof key === 'function') return key as LockKeyFactory;
  if (typeof key === 'string' && key.trim() !== '') return new LockKeyTemplate(key);
  throw new InvalidLockArgumentError('@DistributedLock key', `expected a non-empty string or a function, got ${describe(key)}.`);
}
