import { Controller, Get, Inject } from '@nestjs/common';
import { HealthCheck, HealthCheckService, type HealthCheckResult } from '@nestjs/terminus';
import { DistributedLockHealthIndicator } from 'nestjs-distributed-lock';
import { INVENTORY_CONFIG, type InventoryConfig } from '../inventory/inventory.config.js';

@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly locks: DistributedLockHealthIndicator,
    @Inject(INVENTORY_CONFIG) private readonly config: InventoryConfig,
  ) {}

  /**
   * 200 when the lock store is healthy (Redis answers PING, the lock scripts are cached, the unlock
   * subscriber is connected); 503 otherwise, with the failing check. Used by the demo runner and
   * docker-compose health checks.
   */
  @Get()
  @HealthCheck()
  async check(): Promise<HealthCheckResult & { instance: string }> {
    const result = await this.health.check([() => this.locks.isHealthy('locks')]);
    return { ...result, instance: this.config.instanceId };
  }
}
