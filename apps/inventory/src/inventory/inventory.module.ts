import { Module } from '@nestjs/common';
import { InventoryController } from './inventory.controller.js';
import { INVENTORY_CONFIG, readInventoryConfig } from './inventory.config.js';
import { InventoryService } from './inventory.service.js';
import { InventoryStore } from './inventory.store.js';
import { RestockJob } from './restock.job.js';
import { RESTOCK_WORKER, RESTOCK_WORKER_CONTROL, RestockWorker, RestockWorkerControl } from './restock.worker.js';

@Module({
  controllers: [InventoryController],
  providers: [
    { provide: INVENTORY_CONFIG, useFactory: () => readInventoryConfig() },
    InventoryStore,
    InventoryService,
    RestockJob,
    // The leader-only restock worker and its unlocked control, when switched on (see restock.worker.ts).
    ...(RESTOCK_WORKER ? [RestockWorker] : []),
    ...(RESTOCK_WORKER_CONTROL ? [RestockWorkerControl] : []),
  ],
  exports: [INVENTORY_CONFIG],
})
export class InventoryModule {}
