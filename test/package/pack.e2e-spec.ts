import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { useRedis } from '../harness/use-redis.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const LIBRARY = join(ROOT, 'libs/distributed-lock');
/** The NestJS 11 line the peer range admits besides 12 (checked in a CommonJS app below). */
const NEST_11 = '^11.0.0';

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

// The testing entry point resolves and type-checks from the package too.
import { DistributedLockTestingModule, InMemoryLockStore } from 'nestjs-distributed-lock/testing';
@Module({ imports: [DistributedLockTestingModule.forRoot({ store: new InMemoryLockStore() })], controllers: [ProductsController] })
export class TestAppModule {}
`;

/** A unit test's set-up from the package: no Redis at all (REDIS_PORT points nowhere). */
const TESTING_MJS = `
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { LockService } from 'nestjs-distributed-lock';
import { DistributedLockTestingModule } from 'nestjs-distributed-lock/testing';

class AppModule {}
Module({ imports: [DistributedLockTestingModule.forRoot()] })(AppModule);

const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
const locks = app.get(LockService);
const result = await locks.withLock('in-memory', async (lock) => ({ token: lock.token, held: await locks.isLocked('in-memory') }));
await app.close();
console.log(JSON.stringify(result));
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

/**
 * A NestJS 11 application as most of them are: CommonJS (no "type": "module"), so the ESM package
 * is loaded through Node's require(esm) (Node >= 20.19). An HTTP app with the decorator on a
 * controller method and LockService.lock in a handler; app.close() must let the process exit.
 */
const NEST_11_APP_TS = `
import 'reflect-metadata';
import { Controller, Get, Module, Param, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CurrentLock, DistributedLock, DistributedLockModule, LockService, type LockHandle } from 'nestjs-distributed-lock';

@Controller('products')
export class ProductsController {
  constructor(private readonly locks: LockService) {}

  @Post(':id/buy')
  @DistributedLock({ key: 'product:{params.id}', leaseTime: '5s', waitTime: 2000 })
  async buy(@Param('id') id: string, @CurrentLock() lock: LockHandle): Promise<{ token: number; held: boolean }> {
    return { token: lock.token, held: await this.locks.isLocked('product:' + id) };
  }

  @Get('stock')
  async stock(): Promise<{ token: number; held: boolean }> {
    const handle = await this.locks.lock('stock', '5s');
    try {
      return { token: handle.token, held: await this.locks.isLocked('stock') };
    } finally {
      await handle.unlock();
    }
  }
}

@Module({ imports: [DistributedLockModule.forRoot({ keyPrefix: 'nest11:' })], controllers: [ProductsController] })
export class AppModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create(AppModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  const url = await app.getUrl();
  const buy = await (await fetch(url + '/products/7/buy', { method: 'POST' })).json();
  const stock = await (await fetch(url + '/products/stock')).json();
  const locks = app.get(LockService);
  const released = !(await locks.isLocked('product:7')) && !(await locks.isLocked('stock'));
  await app.close();
  console.log(JSON.stringify({ buy, stock, released }));
}
void main();
`;

describe('the packed library, installed like a user installs it', () => {
  const redis = useRedis();
  let workdir: string;
  let tarball: string;
  let files: string[];

  beforeAll(async () => {
    workdir = mkdtempSync(join(tmpdir(), 'dlock-consumer-'));
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', workdir], { cwd: LIBRARY });
    const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    tarball = join(workdir, packed!.filename);
    files = packed!.files.map((file) => file.path);
  });
  afterAll(() => {
    rmSync(workdir, { recursive: true, force: true });
  });

  it('npm pack -> npm install in a fresh app -> type-checks, boots, and takes a lock', async () => {
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/index.d.ts');
    expect(files).toContain('dist/testing/index.js');
    expect(files.some((file) => file.endsWith('.spec.js') || file.endsWith('.ts') && !file.endsWith('.d.ts'))).toBe(false);

    const app = join(workdir, 'nest12-esm');
    mkdirSync(app);
    const dependencies: Record<string, string> = { 'nestjs-distributed-lock': `file:${tarball}` };
    for (const name of ['@nestjs/common', '@nestjs/core', 'ioredis', 'reflect-metadata', 'rxjs']) dependencies[name] = installedVersion(name);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies }, null, 2));
    writeFileSync(join(app, 'main.mjs'), MAIN_MJS);
    writeFileSync(join(app, 'testing.mjs'), TESTING_MJS);
    writeFileSync(join(app, 'consumer.ts'), CONSUMER_TS);
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true,
          experimentalDecorators: true, emitDecoratorMetadata: true, skipLibCheck: true, types: [],
        },
        files: ['consumer.ts'],
      }),
    );

    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd: app, timeout: 240_000 });
    await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', app], { cwd: app });

    const output = await run(process.execPath, ['main.mjs'], {
      cwd: app,
      env: { ...process.env, REDIS_PORT: String(redis.server().port) },
      timeout: 30_000,
    });
    expect(JSON.parse(output.stdout)).toEqual({ token: expect.any(Number), held: true });

    const withoutRedis = await run(process.execPath, ['testing.mjs'], { cwd: app, env: { ...process.env, REDIS_PORT: '1' }, timeout: 30_000 });
    expect(JSON.parse(withoutRedis.stdout)).toEqual({ token: expect.any(Number), held: true });
  }, 300_000);

  it('works in a CommonJS NestJS 11 HTTP app (require(esm)): the peer range admits it, it compiles, serves, and exits', async () => {
    const app = join(workdir, 'nest11-cjs');
    mkdirSync(app);
    const dependencies: Record<string, string> = {
      'nestjs-distributed-lock': `file:${tarball}`,
      '@nestjs/common': NEST_11,
      '@nestjs/core': NEST_11,
      '@nestjs/platform-express': NEST_11,
    };
    for (const name of ['ioredis', 'reflect-metadata', 'rxjs']) dependencies[name] = installedVersion(name);
    // No "type": "module": a CommonJS app. No --legacy-peer-deps: the install fails if the peer range excludes Nest 11.
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'nest11-consumer', private: true, dependencies }, null, 2));
    writeFileSync(join(app, 'main.ts'), NEST_11_APP_TS);
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, outDir: 'dist',
          experimentalDecorators: true, emitDecoratorMetadata: true, skipLibCheck: true, types: [],
        },
        files: ['main.ts'],
      }),
    );

    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd: app, timeout: 240_000 });
    const nest = JSON.parse(readFileSync(join(app, 'node_modules/@nestjs/core/package.json'), 'utf8')) as { version: string };
    expect(nest.version).toMatch(/^11\./);
    await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', app], { cwd: app });
    expect(readFileSync(join(app, 'dist/main.js'), 'utf8')).toContain('require("nestjs-distributed-lock")');

    const output = await run(process.execPath, ['dist/main.js'], {
      cwd: app,
      env: { ...process.env, REDIS_PORT: String(redis.server().port) },
      timeout: 30_000,
    });
    expect(JSON.parse(output.stdout)).toEqual({ buy: { token: expect.any(Number), held: true }, stock: { token: expect.any(Number), held: true }, released: true });
  }, 300_000);
});
