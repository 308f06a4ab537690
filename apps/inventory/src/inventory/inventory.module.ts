import { Module } from '@nestjs/common';
import { InventoryController } from './inventory.controller.js';
import { INVENTORY_CONFIG, readInventoryConfig } from './inventory.config.js';
import { InventoryService } from './inventory.service.js';
import { InventoryStore } from './inventory.store.js';
import { RestockJob } from './restock.job.js';

@Module({
  controllers: [InventoryController],
  providers: [{ provide: INVENTORY_CONFIG, useFactory: () => readInventoryConfig() }, InventoryStore, InventoryService, RestockJob],
  exports: [INVENTORY_CONFIG],
})
export class InventoryModule {}
