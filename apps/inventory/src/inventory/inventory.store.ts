import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { LockService } from 'nestjs-distributed-lock';

/**
 * Stock and orders of a product, in Redis. The keys carry the product's lock name as hash tag
 * (`{product:<id>}`), so in cluster mode they live in the lock's slot.
 *
 * Fencing: a holder reads with its lock's token, and the read records the token as the highest seen
 * for the product; a write is refused if a higher token has been seen since. So a holder whose lease
 * ran out (pause, slow work) cannot write back a stock value that a newer holder has already read.
 * Without a token (the unprotected endpoint) reads and writes are plain, and race.
 */
const READ_SCRIPT = `
if ARGV[1] ~= '' then
  local seen = tonumber(redis.call('get', KEYS[2]) or '0')
  if tonumber(ARGV[1]) > seen then redis.call('set', KEYS[2], ARGV[1]) end
end
return redis.call('get', KEYS[1])
`;

const WRITE_SCRIPT = `
if ARGV[1] ~= '' then
  local seen = tonumber(redis.call('get', KEYS[3]) or '0')
  if tonumber(ARGV[1]) < seen then return -1 end
  redis.call('set', KEYS[3], ARGV[1])
end
redis.call('set', KEYS[1], ARGV[2])
redis.call('rpush', KEYS[2], ARGV[3])
return 1
`;

/** Fenced INCRBY of an existing product's stock: -1 stale token, -2 unknown product, else the new stock. */
const RESTOCK_SCRIPT = `
if ARGV[1] ~= '' then
  local seen = tonumber(redis.call('get', KEYS[2]) or '0')
  if tonumber(ARGV[1]) < seen then return -1 end
  redis.call('set', KEYS[2], ARGV[1])
end
if redis.call('exists', KEYS[1]) == 0 then return -2 end
return redis.call('incrby', KEYS[1], ARGV[2])
`;

/**
 * Records one step of the restock worker with the Redis server's time (one clock for every
 * instance). Fenced by the leader's term when one is given: a step of a term lower than the highest
 * recorded goes to the refused list instead. Keys share the `{restock-worker}` hash tag (cluster).
 */
const WORKER_STEP_SCRIPT = `
local clock = redis.call('time')
local at = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local entry = '{"term":' .. (ARGV[1] == '' and 'null' or ARGV[1]) .. ',"instance":' .. cjson.encode(ARGV[2]) .. ',"at":' .. string.format('%.0f', at) .. '}'
if ARGV[1] ~= '' then
  local highest = tonumber(redis.call('get', KEYS[1]) or '0')
  if tonumber(ARGV[1]) < highest then
    redis.call('rpush', KEYS[3], entry)
    return 0
  end
  redis.call('set', KEYS[1], ARGV[1])
end
redis.call('rpush', KEYS[2], entry)
return 1
`;

/** Where the restock worker's steps are recorded (see WORKER_STEP_SCRIPT). */
export const RESTOCK_WORKER_KEYS = {
  /** The highest term seen. */
  term: 'inventory:{restock-worker}:term',
  /** Steps of the leader-only worker: `{ term, instance, at }` (at: Redis server ms). */
  runs: 'inventory:{restock-worker}:runs',
  /** Steps refused because a higher term had acted already (a deposed leader that acted). */
  refused: 'inventory:{restock-worker}:refused',
  /** Steps of the unlocked control worker, which runs in every instance. */
  unlocked: 'inventory:{restock-worker}:unlocked-runs',
} as const;

type ScriptCall = (...args: (string | number)[]) => Promise<unknown>;

export interface ProductState {
  productId: string;
  stock: number;
  orders: number;
  highestToken: number;
}

export interface Order {
  id: string;
  productId: string;
  token: number | null;
  instance: string;
}

@Injectable()
export class InventoryStore {
  private readonly readFenced: ScriptCall;
  private readonly writeFenced: ScriptCall;
  private readonly restockFenced: ScriptCall;
  private readonly workerStep: ScriptCall;

  constructor(private readonly locks: LockService) {
    const redis = locks.redis;
    redis.defineCommand('inventoryRead', { numberOfKeys: 2, lua: READ_SCRIPT });
    redis.defineCommand('inventoryWrite', { numberOfKeys: 3, lua: WRITE_SCRIPT });
    redis.defineCommand('inventoryRestock', { numberOfKeys: 2, lua: RESTOCK_SCRIPT });
    redis.defineCommand('inventoryWorkerStep', { numberOfKeys: 3, lua: WORKER_STEP_SCRIPT });
    const commands = redis as unknown as Record<string, ScriptCall>;
    this.readFenced = commands.inventoryRead!.bind(redis);
    this.writeFenced = commands.inventoryWrite!.bind(redis);
    this.restockFenced = commands.inventoryRestock!.bind(redis);
    this.workerStep = commands.inventoryWorkerStep!.bind(redis);
  }

  /** The lock that protects a product: its keys here share this hash tag. */
  static lockName(productId: string): string {
    return `product:${productId}`;
  }

  private keys(productId: string): { stock: string; orders: string; fence: string } {
    const tag = `inventory:{${InventoryStore.lockName(productId)}}`;
    return { stock: `${tag}:stock`, orders: `${tag}:orders`, fence: `${tag}:highest-token` };
  }

  async setUp(productId: string, stock: number): Promise<ProductState> {
    const keys = this.keys(productId);
    await this.locks.redis.del(keys.orders, keys.fence);
    await this.locks.redis.set(keys.stock, stock);
    return this.state(productId);
  }

  async state(productId: string): Promise<ProductState> {
    const keys = this.keys(productId);
    const [stock, orders, fence] = await Promise.all([
      this.locks.redis.get(keys.stock),
      this.locks.redis.llen(keys.orders),
      this.locks.redis.get(keys.fence),
    ]);
    return { productId, stock: stock === null ? Number.NaN : Number(stock), orders, highestToken: Number(fence ?? 0) };
  }

  /** Current stock, or null for an unknown product. With a token, a fenced read (see class doc). */
  async readStock(productId: string, token: number | null): Promise<number | null> {
    const keys = this.keys(productId);
    const value = (await this.readFenced(keys.stock, keys.fence, token ?? '')) as string | null;
    return value === null ? null : Number(value);
  }

  /** Writes the new stock and records the order; false when a newer lock holder has been seen. */
  async commit(productId: string, newStock: number, token: number | null, instance: string): Promise<Order | null> {
    const keys = this.keys(productId);
    const order: Order = { id: randomUUID(), productId, token, instance };
    const result = await this.writeFenced(keys.stock, keys.orders, keys.fence, token ?? '', newStock, JSON.stringify(order));
    return result === 1 ? order : null;
  }

  /** Adds `amount` to an existing product's stock (fenced by `token`); the new stock, or null (unknown product or stale token). */
  async restock(productId: string, amount: number, token: number): Promise<number | null> {
    const keys = this.keys(productId);
    const result = Number(await this.restockFenced(keys.stock, keys.fence, token, amount));
    return result < 0 ? null : result;
  }

  /**
   * Records one step of the restock worker: fenced by `term` (the leader's) into the runs list, or,
   * with `term` null (the unlocked control), into the control's list. False: refused, a higher term
   * has acted already.
   */
  async recordWorkerStep(term: number | null, instance: string): Promise<boolean> {
    const k = RESTOCK_WORKER_KEYS;
    return Number(await this.workerStep(k.term, term === null ? k.unlocked : k.runs, k.refused, term ?? '', instance)) === 1;
  }

  /** Appends one run of a scheduled job to `listKey`: which tick, which instance. */
  async recordRestockRun(listKey: string, tick: number, instance: string): Promise<void> {
    await this.locks.redis.rpush(listKey, JSON.stringify({ tick, instance }));
  }
}
