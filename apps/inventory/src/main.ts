import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { LockService } from 'nestjs-distributed-lock';
import { AppModule } from './app.module.js';
import { readInventoryConfig } from './inventory/inventory.config.js';

async function bootstrap(): Promise<void> {
  const config = readInventoryConfig();
  const app = await NestFactory.create(AppModule, {
    logger: process.env.LOG_LEVEL === 'debug' ? ['log', 'warn', 'error', 'debug'] : ['log', 'warn', 'error'],
  });
  app.enableShutdownHooks();
  const host = process.env.HOST?.trim() || '0.0.0.0';
  await app.listen(config.port, host);
  const url = await app.getUrl();
  new Logger('Inventory').log(`instance ${config.instanceId} listening on ${url}, locks on ${app.get(LockService).target}, lock board on ${url}/locks`);
}

bootstrap().catch((error: unknown) => {
  const code = (error as { code?: string }).code;
  new Logger('Inventory').error(`start-up failed${code ? ` [${code}]` : ''}: ${(error as Error).message}`);
  process.exitCode = 1;
});
