import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { useRedis } from '../harness/use-redis.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const LIBRARY = join(ROOT, 'libs/distributed-lock');

/** The version installed in the workspace, so the throwaway app resolves from npm's cache. */
function installedVersion(name: string): string {
  return (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}

const CONSUMER_TS = `
import 'reflect-metadata';
import { Controller, Module, Post, Param } from '@nestjs/common';
import { DistributedLock, DistributedLockModule, LockService, CurrentLock, type LockHandle, LockNotHeldError } from 'nestjs-distributed-lock';

@Controller('products')
export class ProductsController {
  constructor(private readonly locks: LockService) {}

  @Post(':id/buy')
  @DistributedLock({ key: 'product:{params.id}', leaseTime: '5s', waitTime: 2000 })
  buy(@Param('id') id: string, @CurrentLock() lock: LockHandle): { id: string; token: number } {
    return { id, token: lock.token };
  }

  async inMethod(): Promise<number> {
    const handle = await this.locks.lock('goods', '5s');
    try {
      return handle.token;
    } finally {
      await handle.unlock();
    }
  }
}

@Module({ imports: [DistributedLockModule.forRoot({ keyPrefix: 'app:' })], controllers: [ProductsController] })
export class AppModule {}

export const isTyped: boolean = new LockNotHeldError('x', 'y').code === 'LOCK_NOT_HELD';
`;

const MAIN_MJS = `
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DistributedLockModule, LockService } from 'nestjs-distributed-lock';

class AppModule {}
Module({ imports: [DistributedLockModule.forRoot()] })(AppModule);

const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
const locks = app.get(LockService);
const result = await locks.withLock('packaged', async (lock) => ({ token: lock.token, held: await locks.isLocked('packaged') }));
await app.close();
console.log(JSON.stringify(result));
`;

describe('the packed library, installed like a user installs it', () => {
  const redis = useRedis();
  let workdir: string;

  beforeAll(() => {
    workdir = mkdtempSync(join(tmpdir(), 'dlock-consumer-'));
  });
  afterAll(() => {
    rmSync(workdir, { recursive: true, force: true });
  });

  it('npm pack -> npm install in a fresh app -> type-checks, boots, and takes a lock', async () => {
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', workdir], { cwd: LIBRARY });
    const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    const files = packed!.files.map((file) => file.path);
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/index.d.ts');
    expect(files.some((file) => file.endsWith('.spec.js') || file.endsWith('.ts') && !file.endsWith('.d.ts'))).toBe(false);

    const dependencies: Record<string, string> = { 'nestjs-distributed-lock': `file:./${packed!.filename}` };
    for (const name of ['@nestjs/common', '@nestjs/core', 'ioredis', 'reflect-metadata', 'rxjs']) dependencies[name] = installedVersion(name);
    writeFileSync(join(workdir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies }, null, 2));
    writeFileSync(join(workdir, 'main.mjs'), MAIN_MJS);
    writeFileSync(join(workdir, 'consumer.ts'), CONSUMER_TS);
    writeFileSync(
      join(workdir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true,
          experimentalDecorators: true, emitDecoratorMetadata: true, skipLibCheck: true, types: [],
        },
        files: ['consumer.ts'],
      }),
    );

    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd: workdir, timeout: 240_000 });
    await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', workdir], { cwd: workdir });

    const output = await run(process.execPath, ['main.mjs'], {
      cwd: workdir,
      env: { ...process.env, REDIS_PORT: String(redis.server().port) },
      timeout: 30_000,
    });
    expect(JSON.parse(output.stdout)).toEqual({ token: 1, held: true });
  }, 300_000);
});
