import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useRedis } from '../harness/use-redis.js';
import { installedVersion, LIBRARY, packLibrary, ROOT, run, userEnv } from './packed-library.js';
import { compileSnippets, readmeSnippets } from './readme-snippets.js';

/** The NestJS 11 line the peer range admits besides 12 (checked in a CommonJS app below). */
const NEST_11 = '^11.0.0';

const CONSUMER_TS = `
import 'reflect-metadata';
import { Controller, Module, Post, Param } from '@nestjs/common';
import { DistributedLock, DistributedLockModule, LockService, CurrentLock, type LockHandle, LockNotHeldError } from 'nestjs-distributed-lock';

@Controller('products')
export class ProductsController {
  constructor(private readonly locks: LockService) {}

  @Post(':id/buy')
  @DistributedLock({ name: 'product:{params.id}', leaseTime: '5s', waitTime: 2000 })
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

/** A unit test's set-up from the package: no Redis at all (DISTRIBUTED_LOCK_REDIS_PORT points nowhere). */
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
  @DistributedLock({ name: 'product:{params.id}', leaseTime: '5s', waitTime: 2000 })
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

/**
 * One library instance per process: Node >= 20.19 resolves `import` and `require` alike to the ES
 * module build (the `module-sync` condition), so a CommonJS dependency that requires the package gets
 * the classes the application imported: one LockService (one DI token), one set of error classes.
 */
const ONE_INSTANCE_MJS = `
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const imported = await import('nestjs-distributed-lock');
const required = require('nestjs-distributed-lock');
const differing = (names, a, b) => names.filter((name) => a[name] === undefined || a[name] !== b[name]);
const errors = Object.keys(imported).filter((name) => name.endsWith('Error'));
console.log(JSON.stringify({
  errors: errors.length,
  different: [
    ...differing(['LockService', 'DistributedLockModule', 'LockClient', ...errors], imported, required),
    ...differing(['InMemoryLockStore', 'DistributedLockTestingModule'], await import('nestjs-distributed-lock/testing'), require('nestjs-distributed-lock/testing')),
    ...differing(['DistributedLockBoardModule', 'DistributedLockBoardEvents'], await import('nestjs-distributed-lock/board'), require('nestjs-distributed-lock/board')),
  ],
  required: require.resolve('nestjs-distributed-lock'),
}));
`;

/**
 * Jest's ESM mode (node --experimental-vm-modules, ESM specs), as Nest 12 apps on Jest run it: on
 * Node < 24.9 its require() cannot load ES modules, so a package whose `import` entry wraps CommonJS
 * code fails there on Nest 12 (ESM only). This one's import entry is the ES module build.
 */
const JEST_ESM_SPEC = `
import { Test } from '@nestjs/testing';
import { LockService } from 'nestjs-distributed-lock';
import { DistributedLockTestingModule } from 'nestjs-distributed-lock/testing';

test('a testing module with the in-memory store', async () => {
  const moduleRef = await Test.createTestingModule({ imports: [DistributedLockTestingModule.forRoot()] }).compile();
  await moduleRef.init();
  expect(await moduleRef.get(LockService).withLock('jest-esm', (lock) => lock.token)).toBeGreaterThan(0);
  await moduleRef.close();
});
`;

describe('the packed library, installed like a user installs it', () => {
  const redis = useRedis();
  let workdir: string;
  let tarball: string;
  let files: string[];

  beforeAll(async () => {
    workdir = mkdtempSync(join(tmpdir(), 'dlock-consumer-'));
    ({ tarball, files } = await packLibrary(workdir));
  }, 120_000);
  afterAll(() => {
    rmSync(workdir, { recursive: true, force: true });
  });

  it('ships both builds with their types, the README, LICENSE and CHANGELOG, and no sources', () => {
    for (const build of ['dist/', 'dist/cjs/']) {
      for (const entry of ['index', 'testing/index', 'board/index']) {
        expect(files).toContain(`${build}${entry}.js`);
        expect(files).toContain(`${build}${entry}.d.ts`);
      }
    }
    expect(files).toContain('dist/cjs/package.json'); // { "type": "commonjs" }: dist/cjs is read as CommonJS
    expect(files).toEqual(expect.arrayContaining(['README.md', 'LICENSE', 'CHANGELOG.md', 'package.json']));
    expect(readFileSync(join(ROOT, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n/);
    expect((JSON.parse(readFileSync(join(LIBRARY, 'package.json'), 'utf8')) as { license: string }).license).toBe('MIT');
    expect(files.filter((file) => file.endsWith('.spec.js') || (file.endsWith('.ts') && !file.endsWith('.d.ts')))).toEqual([]);
  });

  describe('in a plain ESM app (NestJS 12)', () => {
    let app: string;

    beforeAll(async () => {
      app = join(workdir, 'nest12-esm');
      mkdirSync(app);
      const dependencies: Record<string, string> = { 'nestjs-distributed-lock': `file:${tarball}` };
      for (const name of [
        '@nestjs/common',
        '@nestjs/core',
        '@nestjs/testing',
        '@nestjs/schedule',
        '@nestjs/terminus',
        '@types/node',
        'ioredis',
        'reflect-metadata',
        'rxjs',
      ]) {
        dependencies[name] = installedVersion(name);
      }
      dependencies['@nestjs/config'] = '^4.0.0 || ^12.0.0'; // used by a README snippet; not a workspace dependency
      writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies }, null, 2));
      await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd: app, env: userEnv(), timeout: 240_000 });
    }, 300_000);

    it('type-checks, boots and takes a lock; the testing entry needs no Redis', async () => {
      writeFileSync(join(app, 'main.mjs'), MAIN_MJS);
      writeFileSync(join(app, 'testing.mjs'), TESTING_MJS);
      writeFileSync(join(app, 'consumer.ts'), CONSUMER_TS);
      writeFileSync(
        join(app, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            strict: true,
            noEmit: true,
            experimentalDecorators: true,
            emitDecoratorMetadata: true,
            types: [],
          },
          files: ['consumer.ts'],
        }),
      );
      await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', app], { cwd: app });

      const output = await run(process.execPath, ['main.mjs'], {
        cwd: app,
        env: { ...process.env, DISTRIBUTED_LOCK_REDIS_PORT: String(redis.server().port) },
        timeout: 30_000,
      });
      expect(JSON.parse(output.stdout)).toEqual({ token: expect.any(Number), held: true });

      const withoutRedis = await run(process.execPath, ['testing.mjs'], {
        cwd: app,
        env: { ...process.env, DISTRIBUTED_LOCK_REDIS_PORT: '1' },
        timeout: 30_000,
      });
      expect(JSON.parse(withoutRedis.stdout)).toEqual({ token: expect.any(Number), held: true });
    }, 120_000);

    it('installs the command-line inspector: npx nestjs-distributed-lock list, on the DISTRIBUTED_LOCK_REDIS_* variables', async () => {
      expect(files).toEqual(expect.arrayContaining(['dist/cli/main.js', 'dist/cjs/cli/main.js']));
      const holder = await redis.client();
      const held = await holder.lock('pack-cli:1', '10s');
      const { stdout } = await run('npx', ['--no-install', 'nestjs-distributed-lock', 'list', 'pack-cli:*'], {
        cwd: app,
        env: userEnv({ DISTRIBUTED_LOCK_REDIS_PORT: String(redis.server().port) }),
        timeout: 60_000,
      });
      expect(stdout).toMatch(new RegExp(`^pack-cli:1 +reentrant +\\S+ +1 +${held.token} `, 'm'));
      await held.unlock();
    }, 90_000);

    it('is one module instance, imported or required: the same LockService, module and error classes', async () => {
      writeFileSync(join(app, 'one-instance.mjs'), ONE_INSTANCE_MJS);
      const { stdout } = await run(process.execPath, ['one-instance.mjs'], { cwd: app, timeout: 30_000 });
      const result = JSON.parse(stdout) as { errors: number; different: string[]; required: string };
      expect(result.errors).toBeGreaterThan(5);
      expect(result.different).toEqual([]);
      expect(result.required).toBe(join(app, 'node_modules/nestjs-distributed-lock/dist/index.js'));
    }, 60_000);

    it("runs in Jest's ESM mode on this Node (Nest 12 with Jest and ESM specs)", async () => {
      mkdirSync(join(app, 'jest'), { recursive: true });
      writeFileSync(join(app, 'jest/lock.test.mjs'), JEST_ESM_SPEC);
      const config = JSON.stringify({ rootDir: app, testMatch: ['<rootDir>/jest/*.test.mjs'], transform: {}, testEnvironment: 'node' });
      const jest = join(ROOT, 'node_modules/jest/bin/jest.js');
      const { stderr } = await run(process.execPath, ['--experimental-vm-modules', jest, '--config', config, '--ci'], {
        cwd: app,
        env: userEnv(),
        timeout: 60_000,
      });
      expect(stderr).toMatch(/Tests:\s+1 passed, 1 total/);
    }, 90_000);

    it('compiles every TypeScript snippet of the README, completed as a reader completes it', () => {
      const snippets = readmeSnippets(readFileSync(join(ROOT, 'README.md'), 'utf8'));
      expect(snippets.length).toBeGreaterThanOrEqual(5); // the quick start: the module, a route, a provider, the service, a unit test
      const failed = compileSnippets(app, snippets).filter((result) => result.errors.length > 0);
      expect(failed.map(({ snippet, errors, source }) => `README.md line ${snippet.line}:\n${errors.join('\n')}\n--- as compiled:\n${source}`)).toEqual([]);
    }, 120_000);
  });

  it('works in a CommonJS NestJS 11 HTTP app run by node (require() gets the ES module build): the peer range admits it, it compiles, serves, and exits', async () => {
    const app = join(workdir, 'nest11-cjs');
    mkdirSync(app);
    const dependencies: Record<string, string> = {
      'nestjs-distributed-lock': `file:${tarball}`,
      '@nestjs/common': NEST_11,
      '@nestjs/core': NEST_11,
      '@nestjs/platform-express': NEST_11,
    };
    // @types/node as every Nest app has it: ioredis' and Nest's own declarations need Node's (skipLibCheck is off).
    for (const name of ['ioredis', 'reflect-metadata', 'rxjs', '@types/node']) dependencies[name] = installedVersion(name);
    // No "type": "module": a CommonJS app. No --legacy-peer-deps: the install fails if the peer range excludes Nest 11.
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'nest11-consumer', private: true, dependencies }, null, 2));
    writeFileSync(join(app, 'main.ts'), NEST_11_APP_TS);
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          outDir: 'dist',
          experimentalDecorators: true,
          emitDecoratorMetadata: true,
          types: [],
        },
        files: ['main.ts'],
      }),
    );

    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd: app, env: userEnv(), timeout: 240_000 });
    const nest = JSON.parse(readFileSync(join(app, 'node_modules/@nestjs/core/package.json'), 'utf8')) as { version: string };
    expect(nest.version).toMatch(/^11\./);
    await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', app], { cwd: app });
    expect(readFileSync(join(app, 'dist/main.js'), 'utf8')).toContain('require("nestjs-distributed-lock")');

    const output = await run(process.execPath, ['dist/main.js'], {
      cwd: app,
      env: { ...process.env, DISTRIBUTED_LOCK_REDIS_PORT: String(redis.server().port) },
      timeout: 30_000,
    });
    expect(JSON.parse(output.stdout)).toEqual({
      buy: { token: expect.any(Number), held: true },
      stock: { token: expect.any(Number), held: true },
      released: true,
    });
  }, 300_000);
});
