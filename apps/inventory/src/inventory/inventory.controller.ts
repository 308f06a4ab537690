import { BadRequestException, Body, Controller, Get, HttpStatus, Inject, Logger, Param, Post, Res } from '@nestjs/common';
import { CurrentLock, DistributedLock, LockNotHeldError, LockService, type LockHandle } from 'nestjs-distributed-lock';
import { INVENTORY_CONFIG, type InventoryConfig } from './inventory.config.js';
import { InventoryService, type PurchaseResult } from './inventory.service.js';
import { InventoryStore, type ProductState } from './inventory.store.js';

/** The part of the HTTP response object the controller uses (Express or Fastify). */
interface StatusResponse {
  status(code: number): unknown;
  setHeader?(name: string, value: string): unknown;
  header?(name: string, value: string): unknown;
}

const STATUS: Record<PurchaseResult['result'], number> = {
  sold: HttpStatus.CREATED,
  'sold-out': HttpStatus.CONFLICT,
  'stale-token': HttpStatus.CONFLICT,
  busy: HttpStatus.LOCKED,
};

/**
 * One purchase endpoint per way of using the library, plus the unprotected control:
 * - decorator: @DistributedLock on the handler, key per product;
 * - lock:      LockService.lock(name) ... unlock(name) inside the method (the seeds' in-method style);
 * - try-lock:  LockService.tryLock(name, wait, lease), answering "busy, retry" when not acquired;
 * - unsafe:    the same purchase without any lock, to show what goes wrong.
 */
@Controller('products')
export class InventoryController {
  private readonly logger = new Logger(InventoryController.name);

  constructor(
    private readonly inventory: InventoryService,
    private readonly store: InventoryStore,
    private readonly locks: LockService,
    @Inject(INVENTORY_CONFIG) private readonly config: InventoryConfig,
  ) {}

  /** Creates or resets a product: `{ "stock": 10 }`. */
  @Post(':id')
  async setUp(@Param('id') id: string, @Body() body: { stock?: unknown }): Promise<ProductState> {
    const stock = body?.stock;
    if (!Number.isInteger(stock) || (stock as number) < 0) throw new BadRequestException('Body must be { "stock": <integer >= 0> }.');
    return this.store.setUp(id, stock as number);
  }

  @Get(':id')
  state(@Param('id') id: string): Promise<ProductState> {
    return this.store.state(id);
  }

  @Post(':id/purchase/decorator')
  @DistributedLock({ name: 'product:{params.id}' })
  async purchaseWithDecorator(
    @Param('id') id: string,
    @CurrentLock() lock: LockHandle,
    @Res({ passthrough: true }) res: StatusResponse,
  ): Promise<PurchaseResult> {
    return this.reply(res, await this.inventory.purchase(id, lock.token));
  }

  @Post(':id/purchase/lock')
  async purchaseWithLock(@Param('id') id: string, @Res({ passthrough: true }) res: StatusResponse): Promise<PurchaseResult> {
    const name = InventoryStore.lockName(id);
    const lock = await this.locks.lock(name, this.config.leaseTime);
    try {
      return this.reply(res, await this.inventory.purchase(id, lock.token));
    } finally {
      await this.locks.unlock(name).catch((error: unknown) => this.lockLost(name, error));
    }
  }

  @Post(':id/purchase/try-lock')
  async purchaseWithTryLock(@Param('id') id: string, @Res({ passthrough: true }) res: StatusResponse): Promise<PurchaseResult> {
    const name = InventoryStore.lockName(id);
    const lock = await this.locks.tryLock(name, this.config.tryWait, this.config.tryLease);
    if (!lock) {
      const retryAfterMs = Math.max(0, await this.locks.remainTimeToLive(name));
      const seconds = String(Math.max(1, Math.ceil(retryAfterMs / 1000)));
      if (res.setHeader) res.setHeader('Retry-After', seconds);
      else res.header?.('Retry-After', seconds);
      return this.reply(res, { result: 'busy', retryAfterMs, instance: this.inventory.instanceId });
    }
    try {
      return this.reply(res, await this.inventory.purchase(id, lock.token));
    } finally {
      await lock.unlock().catch((error: unknown) => this.lockLost(name, error));
    }
  }

  /** Control: no lock at all. Under concurrency it sells more than the stock. */
  @Post(':id/purchase/unsafe')
  async purchaseUnsafe(@Param('id') id: string, @Res({ passthrough: true }) res: StatusResponse): Promise<PurchaseResult> {
    return this.reply(res, await this.inventory.purchase(id, null));
  }

  private reply(res: StatusResponse, result: PurchaseResult): PurchaseResult {
    res.status(STATUS[result.result]);
    return result;
  }

  private lockLost(name: string, error: unknown): void {
    // The lease ran out during the purchase: the fenced write already decided whether it counted.
    if (error instanceof LockNotHeldError) this.logger.warn(`Lock ${name} was no longer held at the end of the purchase`);
    else throw error;
  }
}
