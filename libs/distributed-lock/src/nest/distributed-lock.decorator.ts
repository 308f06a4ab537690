import { SetMetadata, UseInterceptors, type ExecutionContext } from '@nestjs/common';
import { InvalidLockArgumentError, type Duration, type LockAcquireTimeoutError } from '../core/index.js';
import { leaseMs, waitMs } from '../core/locks/acquire-options.js';
import { describe, toMilliseconds } from '../core/util/duration.js';
import { assertKnownKeys, isPlainObject } from '../core/util/validate.js';
import { DISTRIBUTED_LOCK_METADATA, MULTI_KEY_SEPARATOR } from './distributed-lock.constants.js';
import { DistributedLockInterceptor } from './distributed-lock.interceptor.js';
import { LockKeyTemplate } from './lock-key.template.js';
import { createLockedMethod, isLockedMethod } from './locked-method.js';

/** Builds the lock name from the execution context (request, RPC payload...): route handlers only. */
export type LockKeyFactory = (context: ExecutionContext) => string;

/**
 * Builds the lock name from the decorated method's own arguments: any provider, and route handlers.
 * An array of names takes a multi-lock over all of them.
 */
export type LockKeyFromArgs<A extends unknown[] = unknown[]> = (...args: A) => string | string[];

/** Which lock a decorated call takes: the plain reentrant lock (default), a fair lock, or one side of a read-write lock. */
export type DecoratedLockKind = 'reentrant' | 'fair' | 'read' | 'write';


/** What a decorated call is told when its lock stayed busy for the whole waitTime. */
export interface LockedCallInfo {
  /** The lock name. */
  readonly name: string;
  /** How long the call waited before giving up, in ms. */
  readonly waitedMs: number;
  /** The timeout, with the holder's remaining lease in `retryAfterMs`. */
  readonly error: LockAcquireTimeoutError;
  /** The method's arguments (after pipes, for a route handler). */
  readonly args: readonly unknown[];
  /** The execution context of a route handler; undefined for a plain provider call. */
  readonly context: ExecutionContext | undefined;
}

/**
 * When the lock stays busy for the whole waitTime:
 * - `'throw'` (default): over HTTP 423/409 with Retry-After; elsewhere `LockAcquireTimeoutError`.
 * - `'skip'`: the method does not run and the call resolves `undefined` (scheduled jobs).
 * - a function: the method does not run; the call resolves what the function returns (or rejects
 *   with what it throws).
 */
export type OnLocked = 'throw' | 'skip' | ((info: LockedCallInfo) => unknown);

interface CommonLockOptions {
  /**
   * Which lock: `'reentrant'` (default), `'fair'` (arrival order), `'read'` or `'write'` (the two sides
   * of the read-write lock of that name). With several keys, every one is of this kind.
   */
  kind?: DecoratedLockKind;
  /** Lease; omit it to let the watchdog renew the lock while the method runs. */
  leaseTime?: Duration;
  /** How long to wait for the lock (default: module defaultWaitTime, 10 s). */
  waitTime?: Duration;
  /** What to do when the lock stays busy for the whole waitTime (default `'throw'`). */
  onLocked?: OnLocked;
  /**
   * Keep the lock at least this long after the call started, even if it ends sooner (ShedLock's
   * lockAtLeastFor): the release is deferred to then. Must be shorter than leaseTime when both are given.
   */
  lockAtLeastFor?: Duration;
}

export interface DistributedLockOptions extends CommonLockOptions {
  /**
   * Lock name: a literal (`'goods'`), a template over the request (`'product:{params.id}'`; roots
   * params, query, body, user, headers, and data for RPC/WebSocket), a template over the method's
   * arguments (`'product:{args.0}'`, `'order:{args.1.id}'`), or a function of the ExecutionContext
   * (route handlers only; for arguments use `keyFromArgs`). An array of names or templates takes a
   * multi-lock: all of them, all or nothing, in a canonical order (`['account:{body.from}',
   * 'account:{body.to}']`).
   */
  key: string | readonly string[] | LockKeyFactory;
  keyFromArgs?: never;
}

export interface DistributedLockArgsOptions<A extends unknown[]> extends CommonLockOptions {
  /** Lock name from the method's arguments, typed by them: `keyFromArgs: (id: string) => 'product:' + id`. */
  keyFromArgs: LockKeyFromArgs<A>;
  key?: never;
}

/**
 * A method decorator whose method must take the key builder's parameters first (checked by TypeScript;
 * more parameters may follow).
 */
export type LockedMethodDecorator<A extends unknown[]> = (
  target: object,
  propertyKey: string | symbol,
  descriptor: { value?(...args: [...A, ...unknown[]]): unknown },
) => void;

/**
 * What the interceptor and the method wrapper read: checked and parsed once, when the class is defined.
 * `via` says who takes the lock: the interceptor (name from the request or a fixed name, on route
 * handlers) or the method wrapper (name from the arguments; on any provider, and on route handlers
 * with an argument key).
 */
export interface DistributedLockSpec {
  /** A template (static, request or args) or a function of the ExecutionContext; undefined with keyFromArgs. */
  key: LockKeyTemplate | LockKeyFactory | undefined;
  keyFromArgs: LockKeyFromArgs | undefined;
  kind: DecoratedLockKind;
  /** Several keys (a multi-lock): the resolved name holds them separated by MULTI_KEY_SEPARATOR. */
  multi: boolean;
  via: 'interceptor' | 'method';
  leaseMs: number | undefined;
  waitMs: number | undefined;
  onLocked: OnLocked;
  lockAtLeastMs: number | undefined;
  /** `Class.method`, for messages; set when the decorator is applied. */
  where: string;
}

const OPTION_KEYS = ['key', 'keyFromArgs', 'kind', 'leaseTime', 'waitTime', 'onLocked', 'lockAtLeastFor'] as const;
const KINDS: readonly DecoratedLockKind[] = ['reentrant', 'fair', 'read', 'write'];

/**
 * Runs the decorated method under a distributed lock: acquired before it, released after its promise
 * (or a route's observable) settles, success or error. Works on route handlers (through an
 * interceptor, name from the request) and on methods of any provider (services, queue processors,
 * CQRS handlers, scheduled jobs; name from the arguments). Errors of the method pass unchanged.
 *
 * ```ts
 * @DistributedLock('goods', '5s')
 * @DistributedLock({ key: 'product:{params.id}', waitTime: '2s' })          // route handler
 * @DistributedLock({ keyFromArgs: (id: string) => `product:${id}` })        // any provider
 * @DistributedLock({ key: 'order:{args.0.id}', onLocked: 'skip' })
 * ```
 */
export function DistributedLock(key: string | LockKeyFactory, leaseTime?: Duration): MethodDecorator;
export function DistributedLock(options: DistributedLockOptions): MethodDecorator;
export function DistributedLock<A extends unknown[]>(options: DistributedLockArgsOptions<A>): LockedMethodDecorator<A>;
export function DistributedLock(
  keyOrOptions: string | LockKeyFactory | DistributedLockOptions | DistributedLockArgsOptions<unknown[]>,
  leaseTime?: Duration,
): MethodDecorator {
  const spec = compileSpec(keyOrOptions, leaseTime);
  return lockDecorator(spec, '@DistributedLock');
}

/** Applies a compiled spec: wraps the method (keeping its metadata) and registers the interceptor. */
export function lockDecorator(spec: DistributedLockSpec, decorator: string): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    const original: unknown = descriptor.value;
    const where = `${typeof target === 'function' ? target.name : target.constructor.name}.${String(propertyKey)}`;
    if (typeof original !== 'function') {
      throw new InvalidLockArgumentError(decorator, `${where} is not a method; put ${decorator} on a method.`);
    }
    if (isLockedMethod(original)) {
      throw new InvalidLockArgumentError(decorator, `${where} already has a lock decorator; give a method one @DistributedLock or @ScheduledLock.`);
    }
    const placed: DistributedLockSpec = { ...spec, where };
    const wrapper = createLockedMethod(original as (...args: unknown[]) => unknown, placed);
    descriptor.value = wrapper as typeof descriptor.value;
    SetMetadata(DISTRIBUTED_LOCK_METADATA, placed)(target, propertyKey, descriptor);
    UseInterceptors(DistributedLockInterceptor)(target, propertyKey, descriptor);
    return descriptor;
  };
}

export function compileSpec(keyOrOptions: unknown, leaseTime?: Duration, decorator = '@DistributedLock'): DistributedLockSpec {
  if (!isPlainObject(keyOrOptions)) {
    const key = compileKey(keyOrOptions, `${decorator} key`);
    return finish({ key, keyFromArgs: undefined, kind: 'reentrant', multi: false, leaseMs: leaseTime === undefined ? undefined : leaseMs(leaseTime), waitMs: undefined, onLocked: 'throw', lockAtLeastMs: undefined });
  }
  if (leaseTime !== undefined) {
    throw new InvalidLockArgumentError('leaseTime', `give it inside the ${decorator} options object.`);
  }
  const options = keyOrOptions;
  assertKnownKeys(options, OPTION_KEYS, `${decorator} options`);
  if ((options.key === undefined) === (options.keyFromArgs === undefined)) {
    throw new InvalidLockArgumentError(`${decorator} key`, 'give exactly one of key (a name, a template or a function of the ExecutionContext) and keyFromArgs (a function of the arguments).');
  }
  if (options.keyFromArgs !== undefined && typeof options.keyFromArgs !== 'function') {
    throw new InvalidLockArgumentError(`${decorator} keyFromArgs`, `expected a function of the method's arguments, got ${describe(options.keyFromArgs)}.`);
  }
  if (options.kind !== undefined && !KINDS.includes(options.kind as DecoratedLockKind)) {
    throw new InvalidLockArgumentError(`${decorator} kind`, `expected one of ${KINDS.map((kind) => `'${kind}'`).join(', ')}, got ${describe(options.kind)}.`);
  }
  const lease = options.leaseTime === undefined ? undefined : leaseMs(options.leaseTime);
  const atLeast = options.lockAtLeastFor === undefined ? undefined : toMilliseconds(options.lockAtLeastFor, 'lockAtLeastFor', { min: 0 });
  if (atLeast !== undefined && lease !== undefined && atLeast >= lease) {
    throw new InvalidLockArgumentError('lockAtLeastFor', `${atLeast} ms is not shorter than the lease (${lease} ms); the lock would expire before its deferred release. Raise the lease or lower lockAtLeastFor.`);
  }
  return finish({
    key: options.key === undefined ? undefined : compileKey(options.key, `${decorator} key`),
    keyFromArgs: options.keyFromArgs as LockKeyFromArgs | undefined,
    kind: (options.kind as DecoratedLockKind | undefined) ?? 'reentrant',
    multi: Array.isArray(options.key),
    leaseMs: lease,
    waitMs: options.waitTime === undefined ? undefined : waitMs(options.waitTime),
    onLocked: compileOnLocked(options.onLocked, `${decorator} onLocked`),
    lockAtLeastMs: atLeast || undefined,
  });
}

function finish(spec: Omit<DistributedLockSpec, 'via' | 'where'>): DistributedLockSpec {
  const viaMethod = spec.keyFromArgs !== undefined || (spec.key instanceof LockKeyTemplate && spec.key.source === 'args');
  return { ...spec, via: viaMethod ? 'method' : 'interceptor', where: '' };
}

function compileKey(key: unknown, argument: string): LockKeyTemplate | LockKeyFactory {
  if (typeof key === 'function') return key as LockKeyFactory;
  if (Array.isArray(key)) {
    if (key.length === 0 || !key.every((part) => typeof part === 'string' && part.trim() !== '' && !part.includes(MULTI_KEY_SEPARATOR))) {
      throw new InvalidLockArgumentError(argument, `expected a non-empty array of non-empty names or templates, got ${describe(key)}.`);
    }
    // One template whose resolution is every name, separated: the request and argument roots of
    // each part are resolved exactly as for a single key.
    return new LockKeyTemplate(key.join(MULTI_KEY_SEPARATOR));
  }
  if (typeof key === 'string' && key.trim() !== '') return new LockKeyTemplate(key);
  throw new InvalidLockArgumentError(argument, `expected a non-empty string or a function, got ${describe(key)}.`);
}

function compileOnLocked(value: unknown, argument: string): OnLocked {
  if (value === undefined) return 'throw';
  if (value === 'throw' || value === 'skip' || typeof value === 'function') return value as OnLocked;
  throw new InvalidLockArgumentError(argument, `expected 'throw', 'skip' or a function (info) => result, got ${describe(value)}.`);
}
