import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import { INVENTORY_CONFIG, type InventoryConfig } from './inventory.config.js';
import { InventoryStore } from './inventory.store.js';

export type PurchaseResult =
  | { result: 'sold'; orderId: string; stockLeft: number; token: number | null; instance: string }
  | { result: 'sold-out'; instance: string }
  | { result: 'stale-token'; token: number | null; instance: string }
  | { result: 'busy'; retryAfterMs: number; instance: string };

/**
 * One purchase: read the stock, do the business work, write stock - 1 and record the order. Run
 * concurrently without a lock, several buyers read the same stock and all sell: an oversell.
 */
@Injectable()
export class InventoryService {
  constructor(
    private readonly store: InventoryStore,
    @Inject(INVENTORY_CONFIG) private readonly config: InventoryConfig,
  ) {}

  get instanceId(): string {
    return this.config.instanceId;
  }

  /** `token`: the fencing token of the lock held for this product, or null when unprotected. */
  async purchase(productId: string, token: number | null): Promise<PurchaseResult> {
    const instance = this.config.instanceId;
    const stock = await this.store.readStock(productId, token);
    if (stock === 'stale') return { result: 'stale-token', token, instance };
    if (stock === null) throw new NotFoundException(`Product ${productId} does not exist; create it with POST /products/${productId}.`);
    if (stock <= 0) return { result: 'sold-out', instance };
    if (this.config.workMs > 0) await sleep(this.config.workMs);
    const order = await this.store.commit(productId, stock - 1, token, instance);
    if (!order) return { result: 'stale-token', token, instance };
    return { result: 'sold', orderId: order.id, stockLeft: stock - 1, token, instance };
  }
}
