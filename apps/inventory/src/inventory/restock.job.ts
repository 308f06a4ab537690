import { Inject, Injectable, Logger } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { LockService, ScheduledLock } from 'nestjs-distributed-lock';
import { INVENTORY_CONFIG, type InventoryConfig } from './inventory.config.js';
import { InventoryStore } from './inventory.store.js';

/**
 * Read when the module is loaded, because @Cron takes its expression when the class is defined.
 * Off unless INVENTORY_RESTOCK_CRON is set (e.g. `* * * * * *`, every second).
 */
const RESTOCK_CRON = process.env.INVENTORY_RESTOCK_CRON?.trim() || undefined;
const RESTOCK_CONTROL = process.env.INVENTORY_RESTOCK_CONTROL?.trim() === 'true';
const AT_MOST = process.env.INVENTORY_RESTOCK_AT_MOST?.trim() || '30s';
const AT_LEAST = process.env.INVENTORY_RESTOCK_AT_LEAST?.trim() || '500ms';

/** Where each run is recorded, per variant: a list of `{ tick, instance }`. */
export const RESTOCK_RUNS_KEY = { locked: 'inventory:restock:runs', unlocked: 'inventory:restock:unlocked-runs' } as const;

/**
 * A scheduled restock: on every tick, adds INVENTORY_RESTOCK_AMOUNT to the stock of
 * INVENTORY_RESTOCK_PRODUCT, in exactly one of the app's instances (@ScheduledLock: the others find
 * the lock taken and skip the tick). The stock write itself goes through the product's lock with a
 * fenced write, like a purchase. Each run is recorded in Redis with its tick and instance.
 *
 * With INVENTORY_RESTOCK_CONTROL=true, a second job with the same schedule and no lock records its
 * runs too: every instance runs that one on every tick (the control).
 */
@Injectable()
export class RestockJob {
  private readonly logger = new Logger('Restock');

  constructor(
    private readonly store: InventoryStore,
    private readonly locks: LockService,
    @Inject(INVENTORY_CONFIG) private readonly config: InventoryConfig,
  ) {}

  @Cron(RESTOCK_CRON ?? '* * * * * *', { name: 'inventory-restock', disabled: RESTOCK_CRON === undefined })
  @ScheduledLock({ name: 'inventory:restock', leaseTime: AT_MOST, lockAtLeastFor: AT_LEAST })
  async restock(): Promise<void> {
    const tick = currentTick();
    const { restockProduct: productId, restockAmount: amount } = this.config;
    const stock = await this.locks.withLock(InventoryStore.lockName(productId), (lock) => this.store.restock(productId, amount, lock.token), {
      waitTime: '5s',
    });
    await this.store.recordRestockRun(RESTOCK_RUNS_KEY.locked, tick, this.config.instanceId);
    if (stock !== null) this.logger.debug?.(`tick ${tick}: ${productId} restocked to ${stock}`);
  }

  @Cron(RESTOCK_CRON ?? '* * * * * *', { name: 'inventory-restock-unlocked', disabled: RESTOCK_CRON === undefined || !RESTOCK_CONTROL })
  async restockUnlocked(): Promise<void> {
    await this.store.recordRestockRun(RESTOCK_RUNS_KEY.unlocked, currentTick(), this.config.instanceId);
  }
}

/**
 * The tick a run belongs to: the scheduled second, rounded (a timer may fire a little before or after
 * the second it is meant for). A label for the demo's records, not lease accounting.
 */
function currentTick(): number {
  return Math.round(Date.now() / 1000);
}
