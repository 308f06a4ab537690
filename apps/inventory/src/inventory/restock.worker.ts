import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { Leader, LockLostError, LockService, type Leadership } from 'nestjs-distributed-lock';
import { INVENTORY_CONFIG, type InventoryConfig } from './inventory.config.js';
import { InventoryStore } from './inventory.store.js';

/** Read when the module is loaded: the providers below are registered only when asked for. */
export const RESTOCK_WORKER = process.env.INVENTORY_RESTOCK_WORKER?.trim() === 'true';
export const RESTOCK_WORKER_CONTROL = process.env.INVENTORY_RESTOCK_WORKER_CONTROL?.trim() === 'true';

/** Runs `step` every `intervalMs` until `signal` aborts. */
async function everyInterval(signal: AbortSignal, intervalMs: number, step: () => Promise<void>): Promise<void> {
  while (!signal.aborted) {
    await sleep(intervalMs, undefined, { signal }).catch(() => undefined);
    if (signal.aborted) return;
    await step();
  }
}

/**
 * The restock job as a long-running worker that must run on exactly one instance (INVENTORY_RESTOCK_WORKER=true):
 * every INVENTORY_RESTOCK_WORKER_INTERVAL ms it adds stock to INVENTORY_RESTOCK_PRODUCT (under the
 * product's lock, fenced by that lock's token) and records the step, fenced by its leadership term.
 *
 * @Leader makes it run on the elected instance only; when that instance dies or pauses, another
 * takes over within the lease (DISTRIBUTED_LOCK_WATCHDOG_TIMEOUT), and on `app.close()` it stops and hands over
 * at once. Before each step it checks its leadership (`throwIfLost()`: a leader resumed after a pause
 * longer than its lease learns it here, before acting), and the term fences the record, so a step of
 * a deposed leader that slipped through would be refused.
 */
@Injectable()
export class RestockWorker {
  private readonly logger = new Logger('RestockWorker');

  constructor(
    private readonly store: InventoryStore,
    private readonly locks: LockService,
    @Inject(INVENTORY_CONFIG) private readonly config: InventoryConfig,
  ) {}

  @Leader('inventory:restock-worker')
  async run(leadership: Leadership): Promise<void> {
    this.logger.log(`restock worker started here (term ${leadership.term})`);
    try {
      await everyInterval(leadership.signal, this.config.restockWorkerIntervalMs, async () => {
        leadership.throwIfLost();
        const { restockProduct: productId, restockAmount: amount } = this.config;
        await this.locks.withLock(InventoryStore.lockName(productId), (lock) => this.store.restock(productId, amount, lock.token), { waitTime: '5s' });
        if (!(await this.store.recordWorkerStep(leadership.term, this.config.instanceId))) {
          this.logger.warn(`step of term ${leadership.term} refused: a newer leader has acted`);
        }
      });
    } catch (error) {
      if (!(error instanceof LockLostError)) throw error; // a lost leadership ends the run quietly
    }
    this.logger.log(`restock worker stopped here (term ${leadership.term})`);
  }
}

/**
 * The control (INVENTORY_RESTOCK_WORKER_CONTROL=true): the same worker's recording without the
 * election, started in every instance; it only records its steps (no stock change).
 */
@Injectable()
export class RestockWorkerControl implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly stop = new AbortController();
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: InventoryStore,
    @Inject(INVENTORY_CONFIG) private readonly config: InventoryConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.running = everyInterval(this.stop.signal, this.config.restockWorkerIntervalMs, async () => {
      await this.store.recordWorkerStep(null, this.config.instanceId);
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stop.abort();
    await this.running;
  }
}
