/**
 * The decorator scenario's app, run in its own process: the same tiny handler three times, without
 * a lock, under `@DistributedLock` with the benchmark's 10 s lease, and under `@DistributedLock`
 * with the default watchdog lease. Every request locks its own key (`{params.id}` is unique per
 * request), so the difference measures the decorator's cost, not waiting. Reports its port over IPC.
 * env: BENCH_REDIS_HOST, BENCH_REDIS_PORT.
 */
import 'reflect-metadata';
import { Controller, Get, Module, Param } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DistributedLock, DistributedLockModule } from 'nestjs-distributed-lock';
import { LEASE_MS } from '../adapters/adapter.js';

@Controller()
class BenchController {
  @Get('plain/:id')
  plain(@Param('id') id: string): { id: string } {
    return { id };
  }

  @Get('locked/:id')
  @DistributedLock({ name: 'bench:decorator:{params.id}', leaseTime: LEASE_MS })
  locked(@Param('id') id: string): { id: string } {
    return { id };
  }

  @Get('watchdog/:id')
  @DistributedLock({ name: 'bench:decorator-watchdog:{params.id}' })
  watchdog(@Param('id') id: string): { id: string } {
    return { id };
  }
}

@Module({
  imports: [
    DistributedLockModule.forRoot({
      connection: { mode: 'single', host: process.env.BENCH_REDIS_HOST ?? '127.0.0.1', port: Number(process.env.BENCH_REDIS_PORT) },
    }),
  ],
  controllers: [BenchController],
})
class BenchAppModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create(BenchAppModule, { logger: ['error', 'warn'] });
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  const stop = (): void => {
    void app.close().finally(() => process.exit(0));
  };
  process.on('disconnect', stop);
  process.on('SIGTERM', stop);
  process.send!({ type: 'listening', port: address.port });
}

main().catch((error: unknown) => {
  console.error(`decorator app failed to start: ${(error as Error).stack ?? String(error)}`);
  process.exit(1);
});
