import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TerminusModule } from '@nestjs/terminus';
import { DistributedLockModule } from 'nestjs-distributed-lock';
import { HealthController } from './health/health.controller.js';
import { InventoryModule } from './inventory/inventory.module.js';

/** Redis and lock settings come from REDIS_* / LOCK_* variables only: the same build runs in every mode. */
@Module({
  imports: [DistributedLockModule.forRoot(), ScheduleModule.forRoot(), TerminusModule.forRoot(), InventoryModule],
  controllers: [HealthController],
})
export class AppModule {}
