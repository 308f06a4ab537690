import type { ExecutionContext } from '@nestjs/common';
import { InvalidLockArgumentError, type Duration, type LockAcquireTimeoutError, type LockHandle, type LockKind, type LockLostError } from '../core/index.js';
import { leaseMs, waitMs, describe, toMilliseconds, assertKnownKeys, isPlainObject } from '../core/internal.js';
import { LockNameTemplate, type LockNameSource } from './lock-name.resolver.js';

/** Metadata key under which @DistributedLock (and @ScheduledLock, @DistributedSemaphore) stores its compiled metadata on a method. */
export const DISTRIBUTED_LOCK_METADATA = 'nestjs-distributed-lock:metadata';

/**
 * Builds the lock name from the ExecutionContext of a request Nest handles (an HTTP route, a GraphQL
 * resolver, a message pattern, a gateway message): request handlers only.
 */
export type LockNameFactory = (context: ExecutionContext) => string;

/**
 * Builds the lock name from the decorated method's own arguments: any provider, and request handlers.
 * An array of names takes a multi-lock over all of them.
 */
export type LockNameFromArgs<A extends unknown[] = unknown[]> = (...args: A) => string | string[];

/**
 * Which lock a decorated call takes: the plain reentrant lock (default), a fair lock, or one side of a
 * read-write lock. It is LockKind (the kind an event reports) without the semaphore, which has its
 * own decorator; inspection's InspectedLockKind sees a read-write lock as the one lock Redis holds.
 */
export type DecoratedLockKind = Exclude<LockKind, 'semaphore'>;

/** What a decorated call is told when its lock stayed busy for the whole waitTime. */
export interface LockBusyInfo {
  /** The lock name (names joined with ', ' for a multi-lock). */
  readonly name: string;
  /** How long the call waited before giving up, in ms. */
  readonly waitedMs: number;
  /** The timeout, with the holder's remaining lease in `retryAfterMs`. */
  readonly error: LockAcquireTimeoutError;
  /** The method's arguments (after pipes, for a request handler). */
  readonly args: readonly unknown[];
  /** The execution context of a request handler; undefined for a call made by code. */
  readonly context: ExecutionContext | undefined;
}

/**
 * When the lock stays busy for the whole waitTime:
 * - `'throw'` (default): a request handler answers "busy, retry after N" in its transport's terms
 *   (HTTP 423/409 with Retry-After; GraphQL, RPC, WebSocket: code `LOCK_ACQUIRE_TIMEOUT` with
 *   `retryAfterMs`); a call made by code rejects with `LockAcquireTimeoutError`.
 * - `'skip'`: the method does not run and the call resolves `undefined` (scheduled jobs).
 * - a function: the method does not run; the call resolves what the function returns (or rejects
 *   with what it throws).
 */
export type OnBusy = 'throw' | 'skip' | ((info: LockBusyInfo) => unknown);

/** What a decorated call's `onLost` function is told when its lock is lost while the method runs. */
export interface LockLostInfo {
  /** The lock name (names joined with ', ' for a multi-lock). */
  readonly name: string;
  /** Why (`error.reason`: lease-expired, not-owner, force-unlocked, client-closed). */
  readonly error: LockLostError;
  /** The call's handle: its `token` is the one a newer holder's writes have overtaken. */
  readonly lock: LockHandle;
  /** The method's arguments. */
  readonly args: readonly unknown[];
  /** The execution context of a request handler; undefined for a call made by code. */
  readonly context: ExecutionContext | undefined;
}

/**
 * When the lock is lost while the decorated method runs (lease ran out during a pause, renewal found
 * it gone, force unlock). The method itself cannot be stopped from outside: it runs on, and its
 * writes must be fenced with the token (or preceded by `lock.throwIfLost()`). In every case the
 * handle's `signal` aborts (with a LockLostError) and a warning is logged.
 * - `'abort'` (default): only that.
 * - `'abort-request'`: also answers the request at once, code `LOCK_LOST` (HTTP 503), if its answer
 *   has not been sent yet (request handlers of every transport; for a call made by code the same as
 *   'abort'). What the handler returns later is dropped, and its lock is still released only when it
 *   ends.
 * - a function: called once with LockLostInfo (errors it throws are logged), e.g. to roll back, alert,
 *   or mark the work for a retry.
 */
export type OnLost = 'abort' | 'abort-request' | ((info: LockLostInfo) => void | Promise<void>);

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
  onBusy?: OnBusy;
  /** What to do when the lock is lost while the method runs (default `'abort'`: its signal aborts). See OnLost. */
  onLost?: OnLost;
  /**
   * Keep the lock at least this long after the call started, even if it ends sooner (ShedLock's
   * lockAtLeastFor): the release is deferred to then. Must be shorter than leaseTime when both are given.
   */
  lockAtLeastFor?: Duration;
}

export interface DistributedLockOptions extends CommonLockOptions {
  /**
   * Lock name: a literal (`'goods'`), a template over the request (`'product:{params.id}'`; roots
   * params, query, body, user, headers over HTTP; data for RPC and WebSocket payloads and a GraphQL
   * field's arguments, with user and headers there too), a template over the method's arguments
   * (`'product:{args.0}'`, `'order:{args.1.id}'`), or a function of the ExecutionContext (request
   * handlers only; for arguments use `nameFromArgs`). An array of names or templates takes a
   * multi-lock: all of them, all or nothing, in a canonical order (`['account:{body.from}',
   * 'account:{body.to}']`).
   */
  name: string | readonly string[] | LockNameFactory;
  nameFromArgs?: never;
}

export interface DistributedLockArgsOptions<A extends unknown[]> extends CommonLockOptions {
  /** Lock name from the method's arguments, typed by them: `nameFromArgs: (id: string) => 'product:' + id`. */
  nameFromArgs: LockNameFromArgs<A>;
  name?: never;
}

/**
 * A method decorator whose method must take the name builder's parameters first (checked by TypeScript;
 * more parameters may follow).
 */
export type LockedMethodDecorator<A extends unknown[]> = (
  target: object,
  propertyKey: string | symbol,
  descriptor: { value?(...args: [...A, ...unknown[]]): unknown },
) => void;

/**
 * What @DistributedLock stores on a method (Nest metadata): the options, checked and compiled once,
 * when the class is defined. Read by the method wrapper's runner (every call) and by the interceptor
 * and the explorer (request handlers).
 */
export interface DistributedLockMetadata {
  /** The compiled name option: what the lock names of a call are made from (see resolveLockNames). */
  name: LockNameSource;
  kind: DecoratedLockKind;
  leaseMs: number | undefined;
  waitMs: number | undefined;
  onBusy: OnBusy;
  onLost: OnLost;
  lockAtLeastMs: number | undefined;
  /**
   * When Redis fails to answer (LockBackendError): 'throw' (the call fails, closed), or 'skip' (the
   * method does not run and resolves undefined; counted in the outage log): @ScheduledLock's, whose
   * caller, a scheduler, can do nothing with the error but log it on every tick.
   */
  onUnavailable: 'throw' | 'skip';
  /** `@DistributedLock`, `@ScheduledLock` or `@DistributedSemaphore`, for messages. */
  decorator: string;
  /** `Class.method`, for messages; set when the decorator is applied. */
  where: string;
  /** Set by @DistributedSemaphore: the call takes permits of the semaphore of that name instead of a lock. */
  semaphore?: DecoratedSemaphore;
}

/** What a @DistributedSemaphore call takes: `perCall` permits of a semaphore of `size`. */
export interface DecoratedSemaphore {
  /** The semaphore's size (stored at its first use, see LockClient.getSemaphore). */
  readonly size: number;
  /** Permits each call takes. */
  readonly perCall: number;
  readonly queueTimeoutMs: number | undefined;
}

const OPTION_KEYS = ['name', 'nameFromArgs', 'kind', 'leaseTime', 'waitTime', 'onBusy', 'onLost', 'lockAtLeastFor'] as const;
const KINDS: readonly DecoratedLockKind[] = ['reentrant', 'fair', 'read', 'write'];

export function toLockMetadata(keyOrOptions: unknown, leaseTime?: Duration, decorator = '@DistributedLock'): DistributedLockMetadata {
  const common = { decorator, where: '', onUnavailable: 'throw' } as const;
  if (!isPlainObject(keyOrOptions)) {
    return {
      ...common,
      name: compileName(keyOrOptions, `${decorator} name`),
      kind: 'reentrant',
      leaseMs: leaseTime === undefined ? undefined : leaseMs(leaseTime),
      waitMs: undefined,
      onBusy: 'throw',
      onLost: 'abort',
      lockAtLeastMs: undefined,
    };
  }
  if (leaseTime !== undefined) {
    throw new InvalidLockArgumentError('leaseTime', `give it inside the ${decorator} options object.`);
  }
  const options = keyOrOptions;
  assertKnownKeys(options, OPTION_KEYS, `${decorator} options`);
  if ((options.name === undefined) === (options.nameFromArgs === undefined)) {
    throw new InvalidLockArgumentError(
      `${decorator} name`,
      'give exactly one of name (a name, a template or a function of the ExecutionContext) and nameFromArgs (a function of the arguments).',
    );
  }
  if (options.nameFromArgs !== undefined && typeof options.nameFromArgs !== 'function') {
    throw new InvalidLockArgumentError(`${decorator} nameFromArgs`, `expected a function of the method's arguments, got ${describe(options.nameFromArgs)}.`);
  }
  if (options.kind !== undefined && !KINDS.includes(options.kind as DecoratedLockKind)) {
    throw new InvalidLockArgumentError(`${decorator} kind`, `expected one of ${KINDS.map((kind) => `'${kind}'`).join(', ')}, got ${describe(options.kind)}.`);
  }
  const lease = options.leaseTime === undefined ? undefined : leaseMs(options.leaseTime);
  const atLeast = options.lockAtLeastFor === undefined ? undefined : toMilliseconds(options.lockAtLeastFor, 'lockAtLeastFor', { min: 0 });
  if (atLeast !== undefined && lease !== undefined && atLeast >= lease) {
    throw new InvalidLockArgumentError(
      'lockAtLeastFor',
      `${atLeast} ms is not shorter than the lease (${lease} ms); the lock would expire before its deferred release. Raise the lease or lower lockAtLeastFor.`,
    );
  }
  return {
    ...common,
    name:
      options.nameFromArgs === undefined
        ? compileName(options.name, `${decorator} name`)
        : { from: 'args', build: options.nameFromArgs as (...args: unknown[]) => unknown },
    kind: (options.kind as DecoratedLockKind | undefined) ?? 'reentrant',
    leaseMs: lease,
    waitMs: options.waitTime === undefined ? undefined : waitMs(options.waitTime),
    onBusy: compileOnBusy(options.onBusy, `${decorator} onBusy`),
    onLost: compileOnLost(options.onLost, `${decorator} onLost`),
    lockAtLeastMs: atLeast || undefined,
  };
}

/** A `name` option: a function of the ExecutionContext, or one template, or several (a multi-lock). */
function compileName(key: unknown, argument: string): LockNameSource {
  if (typeof key === 'function') return { from: 'context', build: key as (context: ExecutionContext) => unknown };
  if (Array.isArray(key)) {
    if (key.length === 0 || !key.every((part) => typeof part === 'string' && part.trim() !== '')) {
      throw new InvalidLockArgumentError(argument, `expected a non-empty array of non-empty names or templates, got ${describe(key)}.`);
    }
    const templates = key.map((part: string) => new LockNameTemplate(part));
    if (templates.some((t) => t.source === 'args') && templates.some((t) => t.source === 'request')) {
      throw new InvalidLockArgumentError(
        'lock name',
        `templates ${key.map((part: string) => `"${part}"`).join(', ')} mix {args...} with request fields; a name reads either the method's arguments or the request.`,
      );
    }
    return { from: 'templates', templates };
  }
  if (typeof key === 'string' && key.trim() !== '') return { from: 'templates', templates: [new LockNameTemplate(key)] };
  throw new InvalidLockArgumentError(argument, `expected a non-empty string or a function, got ${describe(key)}.`);
}

function compileOnLost(value: unknown, argument: string): OnLost {
  if (value === undefined) return 'abort';
  if (value === 'abort' || value === 'abort-request' || typeof value === 'function') return value as OnLost;
  throw new InvalidLockArgumentError(argument, `expected 'abort', 'abort-request' or a function (info) => void, got ${describe(value)}.`);
}

function compileOnBusy(value: unknown, argument: string): OnBusy {
  if (value === undefined) return 'throw';
  if (value === 'throw' || value === 'skip' || typeof value === 'function') return value as OnBusy;
  throw new InvalidLockArgumentError(argument, `expected 'throw', 'skip' or a function (info) => result, got ${describe(value)}.`);
}
