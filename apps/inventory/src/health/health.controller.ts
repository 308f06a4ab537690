import { Controller, Get, Inject, ServiceUnavailableException } from '@nestjs/common';
import { LockService } from 'nestjs-distributed-lock';
import { INVENTORY_CONFIG, type InventoryConfig } from '../inventory/inventory.config.js';

@Controller('health')
export class HealthController {
  constructor(
    private readonly locks: LockService,
    @Inject(INVENTORY_CONFIG) private readonly config: InventoryConfig,
  ) {}

  /** 200 when Redis answers; 503 otherwise. Used by the demo runner and docker-compose health checks. */
  @Get()
  async check(): Promise<{ status: 'ok'; instance: string; redis: string }> {
    try {
      await this.locks.redis.ping();
    } catch (error) {
      throw new ServiceUnavailableException({ status: 'error', instance: this.config.instanceId, redis: (error as Error).message });
    }
    return { status: 'ok', instance: this.config.instanceId, redis: this.locks.target };
  }
}
