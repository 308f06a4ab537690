import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TerminusModule } from '@nestjs/terminus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { DistributedLockModule } from 'nestjs-distributed-lock';
import { DistributedLockBoardModule } from 'nestjs-distributed-lock/board';
import { LoopbackOnlyGuard } from './board/loopback-only.guard.js';
import { HealthController } from './health/health.controller.js';
import { InventoryModule } from './inventory/inventory.module.js';
import { MetricsModule } from './metrics/metrics.module.js';

/**
 * The lock module, configured from DISTRIBUTED_LOCK_* like forRoot(), plus metrics: recorded into the
 * app's MeterProvider (served on GET /metrics), with lock names reduced to a bounded label
 * (`product:42` -> `product:*`), and this instance named in lock inspection by INSTANCE_ID.
 */
const LockModule = DistributedLockModule.forRootAsync({
  imports: [MetricsModule],
  inject: [MeterProvider],
  useFactory: (meterProvider: MeterProvider) => ({
    instanceName: process.env.INSTANCE_ID?.trim() || undefined,
    metrics: { meterProvider, metricName: (name: string) => name.replace(/:.*$/, ':*') },
  }),
});

/**
 * The lock board on GET /locks: who holds what and who waits, live, for requests from this machine
 * only (LoopbackOnlyGuard). Read-only unless LOCK_BOARD_FORCE_UNLOCK=true.
 */
const LockBoard = DistributedLockBoardModule.forRoot({
  path: '/locks',
  guards: [LoopbackOnlyGuard],
  forceUnlock: process.env.LOCK_BOARD_FORCE_UNLOCK?.trim() === 'true',
  metricName: (name: string) => name.replace(/:.*$/, ':*'),
  title: `Inventory locks (${process.env.INSTANCE_ID?.trim() || `pid ${process.pid}`})`,
});

/** Redis and lock settings come from DISTRIBUTED_LOCK_* variables only: the same build runs in every mode. */
@Module({
  imports: [LockModule, LockBoard, ScheduleModule.forRoot(), TerminusModule.forRoot(), InventoryModule, MetricsModule],
  controllers: [HealthController],
})
export class AppModule {}
