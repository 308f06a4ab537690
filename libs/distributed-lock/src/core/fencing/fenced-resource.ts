import type { LockClientRedis } from '../config/redis-client.js';
import { InvalidLockArgumentError } from '../errors/invalid-lock-argument.error.js';
import { StaleTokenError } from '../errors/stale-token.error.js';
import { fencedOps, type FencedOpsArgs, type FencedOpsReply } from './fenced-ops.script.js';
import { redisPortOf } from '../redis/client-kind.js';
import type { RedisCommands } from '../redis/redis-port.js';
import { describe, type Duration } from '../util/duration.js';
import { assertLockName } from '../util/validate.js';
import { FencedBatch, type FencedOperations, type FencedValue } from './fenced-batch.js';

/** A fencing token as a lock handle gives it (a number), or as a decimal string. */
export type FencingToken = number | string;

/**
 * Where a fenced resource lives: an ioredis (or iovalkey) client, a node-redis client, cluster or
 * sentinel, or `locks.redis` as it is (LockClientRedis). GLIDE is refused (UnsupportedRedisClientError),
 * which is what `locks.redis` is on GLIDE: give the resource a connection of yours then.
 */
export type FencedRedis = LockClientRedis;

/** A token as the exact decimal string the script compares (tokens are positive integers). */
function tokenText(token: unknown): string {
  if (typeof token === 'number' && Number.isSafeInteger(token) && token > 0) return String(token);
  if (typeof token === 'string' && /^[1-9][0-9]*$/.test(token)) return token;
  throw new InvalidLockArgumentError('fencing token', `expected a lock's token (a positive integer, e.g. handle.token), got ${describe(token)}.`);
}

/**
 * The protected resource, when it lives in Redis: reads and writes fenced by a lock's token, each
 * run as one script that refuses a token lower than the highest the resource has seen (typed
 * StaleTokenError, nothing changed) and records the token otherwise. Reads record it too, so a holder
 * that read before a newer holder cannot write afterwards.
 *
 * ```ts
 * const stock = FencedResource.forLock(redis, `product:${id}`, { prefix: 'inventory:' });
 * await locks.withLock(`product:${id}`, async (lock) => {
 *   const left = Number(await stock.get(lock.token, stock.key('stock')));
 *   await stock.batch(lock.token).set(stock.key('stock'), left - 1).rpush(stock.key('orders'), orderId).exec();
 * });
 * ```
 *
 * The resource may be in the lock's Redis or any other (the fence keys are its own). In a cluster,
 * every key of one call must be in one slot: `forLock` names them with the lock name's hash tag, the
 * lock's own slot. One FencedResource per fence key; create them freely (they hold no connection).
 */
export class FencedResource {
  /** The client, through the library's client port (ioredis or node-redis underneath). */
  private readonly redis: RedisCommands;
  /** `<prefix>{<lockName>}` for a resource made by forLock. */
  private keyBase: string | undefined;

  /** `fenceKey`: where the highest token seen is kept, shared by every key this resource protects. */
  constructor(
    redis: FencedRedis,
    readonly fenceKey: string,
  ) {
    if (typeof fenceKey !== 'string' || fenceKey === '')
      throw new InvalidLockArgumentError('fence key', `expected a non-empty string, got ${describe(fenceKey)}.`);
    this.redis = redisPortOf(redis);
  }

  /**
   * The resource protected by the lock `lockName`: its keys are `<prefix>{<lockName>}:<suffix>` (see
   * `key`), and the highest token seen is kept at `<prefix>{<lockName>}:highest-token`, all in the
   * lock's cluster slot, so one call may touch several of them atomically.
   */
  static forLock(redis: FencedRedis, lockName: string, options: { prefix?: string } = {}): FencedResource {
    assertLockName(lockName);
    const base = `${options.prefix ?? 'fenced:'}{${lockName}}`;
    const resource = new FencedResource(redis, `${base}:highest-token`);
    resource.keyBase = base;
    return resource;
  }

  /** A data key in the lock's slot: `<prefix>{<lockName>}:<suffix>` (resources made by `forLock`). */
  key(suffix: string): string {
    if (this.keyBase === undefined)
      throw new InvalidLockArgumentError('fenced key', 'key() names keys of a resource made by FencedResource.forLock; name your keys yourself otherwise.');
    return `${this.keyBase}:${suffix}`;
  }

  /** Reads `key` (null when missing), recording `token` as seen. */
  async get(token: FencingToken, key: string): Promise<string | null> {
    return (await this.batch(token).get(key).exec())[0] as string | null;
  }

  /** Sets `key` (with `ttl`, expiring: `{ ttl: '1h' }`). */
  async set(token: FencingToken, key: string, value: FencedValue, options?: { ttl?: Duration }): Promise<void> {
    await this.batch(token).set(key, value, options).exec();
  }

  /** Adds `by` to `key`; the new value. */
  async incrby(token: FencingToken, key: string, by: number): Promise<number> {
    return Number((await this.batch(token).incrby(key, by).exec())[0]);
  }

  /** Sets hash fields; how many were new. */
  async hset(token: FencingToken, key: string, fields: Readonly<Record<string, FencedValue>>): Promise<number> {
    return Number((await this.batch(token).hset(key, fields).exec())[0]);
  }

  /** Deletes `key`; whether it existed. */
  async del(token: FencingToken, key: string): Promise<boolean> {
    return Number((await this.batch(token).del(key).exec())[0]) === 1;
  }

  /** Appends to a list; its new length. */
  async rpush(token: FencingToken, key: string, ...values: FencedValue[]): Promise<number> {
    return Number(
      (
        await this.batch(token)
          .rpush(key, ...values)
          .exec()
      )[0],
    );
  }

  /** Several commands fenced as one step (see FencedBatch). */
  batch(token: FencingToken): FencedBatch {
    const text = tokenText(token);
    return new FencedBatch((operations) => this.run(text, operations));
  }

  /** The highest token the resource has seen, or undefined when none. */
  async highestSeen(): Promise<number | undefined> {
    const value = await this.redis.get(this.fenceKey);
    return value === null ? undefined : Number(value);
  }

  private async run(token: string, operations: FencedOperations): Promise<unknown[]> {
    const args: FencedOpsArgs = { fence: this.fenceKey, keys: operations.keys, token, ops: operations.ops };
    const keys = fencedOps.keys(args);
    // EVALSHA, and EVAL once on NOSCRIPT.
    const reply = (await this.redis.runScript(fencedOps, keys, fencedOps.argv(args))) as FencedOpsReply;
    if (reply[0] === 0) throw new StaleTokenError(Number(token), Number(reply[1]), this.fenceKey);
    return reply[1];
  }
}
