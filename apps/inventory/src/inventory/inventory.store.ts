import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { FencedResource, LockService, StaleTokenError } from 'nestjs-distributed-lock';

/** Where the restock worker's steps are recorded (see recordWorkerStep). Keys share the `{restock-worker}` hash tag (cluster). */
export const RESTOCK_WORKER_KEYS = {
  /** The highest term seen (the fence of the worker's steps). */
  term: 'inventory:{restock-worker}:term',
  /** Steps of the leader-only worker: `{ term, instance, at }` (at: Redis server ms). */
  runs: 'inventory:{restock-worker}:runs',
  /** Steps refused because a higher term had acted already (a deposed leader that acted). */
  refused: 'inventory:{restock-worker}:refused',
  /** Steps of the unlocked control worker, which runs in every instance. */
  unlocked: 'inventory:{restock-worker}:unlocked-runs',
} as const;

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

/**
 * Stock and orders of a product, in Redis, fenced with the library's helper (FencedResource): the
 * keys carry the product's lock name as hash tag (`inventory:{product:<id>}:stock`, `:orders`, and
 * `:highest-token` where the helper keeps the highest token seen), so in cluster mode they live in the
 * lock's slot and one fenced step may touch several of them.
 *
 * A holder reads with its lock's token, which records the token as seen; a read or write with a
 * lower token is refused (StaleTokenError). So a holder whose lease ran out (pause, slow work) cannot
 * write back a stock value that a newer holder has already read. Without a token (the unprotected
 * endpoint) reads and writes are plain, and race.
 */
@Injectable()
export class InventoryStore {
  /** The restock worker's steps, fenced by the leader's term. */
  private readonly workerSteps: FencedResource;

  constructor(private readonly locks: LockService) {
    this.workerSteps = new FencedResource(this.redis, RESTOCK_WORKER_KEYS.term);
  }

  /** The lock client's connection: ioredis, made by the library from the app's connection settings. */
  private get redis(): Redis {
    return this.locks.redis as Redis;
  }

  /** The lock that protects a product: its keys here share this hash tag. */
  static lockName(productId: string): string {
    return `product:${productId}`;
  }

  /** The product's fenced resource and its keys (cheap: no connection of its own). */
  private resource(productId: string): { fenced: FencedResource; stock: string; orders: string } {
    const fenced = FencedResource.forLock(this.redis, InventoryStore.lockName(productId), { prefix: 'inventory:' });
    return { fenced, stock: fenced.key('stock'), orders: fenced.key('orders') };
  }

  async setUp(productId: string, stock: number): Promise<ProductState> {
    const { fenced, stock: stockKey, orders } = this.resource(productId);
    await this.redis.del(orders, fenced.fenceKey);
    await this.redis.set(stockKey, stock);
    return this.state(productId);
  }

  async state(productId: string): Promise<ProductState> {
    const { fenced, stock: stockKey, orders } = this.resource(productId);
    const [stock, count, highest] = await Promise.all([this.redis.get(stockKey), this.redis.llen(orders), fenced.highestSeen()]);
    return { productId, stock: stock === null ? Number.NaN : Number(stock), orders: count, highestToken: highest ?? 0 };
  }

  /**
   * Current stock, or null for an unknown product; 'stale' when a newer holder of the product's lock
   * has been seen (a fenced read). Without a token, a plain read.
   */
  async readStock(productId: string, token: number | null): Promise<number | null | 'stale'> {
    const { fenced, stock } = this.resource(productId);
    const value = token === null ? await this.redis.get(stock) : await unlessStale(fenced.get(token, stock));
    if (value === undefined) return 'stale';
    return value === null ? null : Number(value);
  }

  /** Writes the new stock and records the order, in one fenced step; null when a newer lock holder has been seen. */
  async commit(productId: string, newStock: number, token: number | null, instance: string): Promise<Order | null> {
    const { fenced, stock, orders } = this.resource(productId);
    const order: Order = { id: randomUUID(), productId, token, instance };
    if (token === null) {
      await this.redis.multi().set(stock, newStock).rpush(orders, JSON.stringify(order)).exec();
      return order;
    }
    const written = await unlessStale(fenced.batch(token).set(stock, newStock).rpush(orders, JSON.stringify(order)).exec());
    return written === undefined ? null : order;
  }

  /** Adds `amount` to an existing product's stock (fenced by `token`); the new stock, or null (unknown product or stale token). */
  async restock(productId: string, amount: number, token: number): Promise<number | null> {
    const { fenced, stock } = this.resource(productId);
    const current = await unlessStale(fenced.get(token, stock));
    if (current === undefined || current === null) return null;
    return (await unlessStale(fenced.incrby(token, stock, amount))) ?? null;
  }

  /**
   * Records one step of the restock worker, stamped with the Redis server's time (one clock for every
   * instance): fenced by `term` (the leader's) into the runs list, or, with `term` null (the unlocked
   * control), into the control's list. False: refused, a higher term has acted already; the step
   * goes to the refused list.
   */
  async recordWorkerStep(term: number | null, instance: string): Promise<boolean> {
    const k = RESTOCK_WORKER_KEYS;
    const [seconds, micros] = await this.redis.time();
    const entry = JSON.stringify({ term, instance, at: Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) });
    if (term === null) {
      await this.redis.rpush(k.unlocked, entry);
      return true;
    }
    if ((await unlessStale(this.workerSteps.rpush(term, k.runs, entry))) !== undefined) return true;
    await this.redis.rpush(k.refused, entry);
    return false;
  }

  /** Appends one run of a scheduled job to `listKey`: which tick, which instance. */
  async recordRestockRun(listKey: string, tick: number, instance: string): Promise<void> {
    await this.redis.rpush(listKey, JSON.stringify({ tick, instance }));
  }
}

/** A fenced call's result, or undefined when its token was stale. */
async function unlessStale<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof StaleTokenError) return undefined;
    throw error;
  }
}
