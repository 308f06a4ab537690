import 'reflect-metadata';
import { Module, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { DistributedLockModule } from 'nestjs-distributed-lock';
import { DistributedLockBoardModule, type DistributedLockBoardOptions } from 'nestjs-distributed-lock/board';

/** The example guard of the docs, reduced: lets a request in only with the right `x-board-key` header. */
export class BoardKeyGuard implements CanActivate {
  static readonly KEY = 'let-me-see';

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    return request.headers['x-board-key'] === BoardKeyGuard.KEY;
  }
}

export type Platform = 'express' | 'fastify';

/** A Nest app on `platform` with the lock module on the test's Redis and the board mounted with `board`, listening on a free loopback port. */
export async function startBoardApp(
  platform: Platform,
  redis: { host: string; port: number },
  board: DistributedLockBoardOptions & { path?: string; guards?: CanActivate[] | (new () => CanActivate)[] },
  instanceName = 'board-app',
): Promise<{ app: INestApplication; url: string }> {
  @Module({
    imports: [
      DistributedLockModule.forRoot({ connection: { mode: 'single', host: redis.host, port: redis.port }, instanceName }),
      DistributedLockBoardModule.forRoot(board),
    ],
  })
  class BoardTestModule {}
  const app =
    platform === 'fastify'
      ? await NestFactory.create(BoardTestModule, new FastifyAdapter(), { logger: false })
      : await NestFactory.create(BoardTestModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
}
