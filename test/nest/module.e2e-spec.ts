import 'reflect-metadata';
import { Controller, Get, Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  DistributedLock,
  DistributedLockModule,
  InvalidLockConfigError,
  LockBackendError,
  LockConnectionError,
  LockService,
  type DistributedLockModuleOptions,
  type DistributedLockOptionsFactory,
} from 'nestjs-distributed-lock';
import { freePort, RedisServer } from 'redis-topology';
import { useRedis } from '../harness/use-redis.js';
import { stopAllWorkers, WorkerProcess } from '../harness/worker-process.js';

async function withApp<T>(
  imports: unknown[],
  run: (locks: LockService) => Promise<T>,
  extra: { controllers?: unknown[]; providers?: unknown[] } = {},
): Promise<T> {
  const moduleRef = await Test.createTestingModule({
    imports: imports as never[],
    controllers: (extra.controllers ?? []) as never[],
    providers: (extra.providers ?? []) as never[],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  try {
    return await run(app.get(LockService));
  } finally {
    await app.close();
  }
}

/** Builds and initialises an app with the module; returns the start-up error (undefined if it started). */
async function startupError(options: DistributedLockModuleOptions): Promise<unknown> {
  try {
    const moduleRef = await Test.createTestingModule({ imports: [DistributedLockModule.forRoot(options)] }).compile();
    await moduleRef.init();
    await moduleRef.close();
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('DistributedLockModule', () => {
  const redis = useRedis();
  afterEach(stopAllWorkers);

  describe('configuration', () => {
    const saved = { ...process.env };
    afterEach(() => {
      for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
      Object.assign(process.env, saved);
    });

    it("forRoot() with no options reads DISTRIBUTED_LOCK_* from the environment, never the app's own REDIS_URL / REDIS_HOST", async () => {
      // The app's cache or queue settings: were they read, the lock client would refuse both at once or go there.
      process.env.REDIS_URL = 'redis://app-cache.invalid:6390';
      process.env.REDIS_HOST = 'app-cache.invalid';
      process.env.REDIS_PORT = '6390';
      process.env.DISTRIBUTED_LOCK_REDIS_MODE = 'single';
      process.env.DISTRIBUTED_LOCK_REDIS_HOST = '127.0.0.1';
      process.env.DISTRIBUTED_LOCK_REDIS_PORT = String(redis.server().port);
      process.env.DISTRIBUTED_LOCK_KEY_PREFIX = 'envtest:';
      process.env.DISTRIBUTED_LOCK_WATCHDOG_TIMEOUT = '12s';
      process.env.DISTRIBUTED_LOCK_WAIT_TIME = '750ms';
      await withApp([DistributedLockModule.forRoot()], async (locks) => {
        expect(locks.keyPrefix).toBe('envtest:');
        expect(locks.watchdogTimeoutMs).toBe(12_000);
        expect(locks.settings.defaultWaitMs).toBe(750);
        const handle = await locks.lock('env');
        const admin = redis.server().client();
        expect(await admin.exists('envtest:{env}')).toBe(1);
        expect(await admin.pttl('envtest:{env}')).toBeGreaterThan(11_000);
        await handle.unlock();
      });
    });

    it('forRootAsync with useFactory and inject', async () => {
      @Injectable()
      class Settings {
        readonly port = redis.server().port;
      }
      @Module({ providers: [Settings], exports: [Settings] })
      class SettingsModule {}
      await withApp(
        [
          DistributedLockModule.forRootAsync({
            imports: [SettingsModule],
            inject: [Settings],
            useFactory: (settings: Settings) => ({ connection: { mode: 'single', port: settings.port }, keyPrefix: 'async:' }),
          }),
        ],
        async (locks) => {
          expect(locks.keyPrefix).toBe('async:');
          await (await locks.lock('a')).unlock();
        },
      );
    });

    it('forRootAsync with useClass', async () => {
      const port = redis.server().port;
      @Injectable()
      class LockOptionsFactory implements DistributedLockOptionsFactory {
        createDistributedLockOptions(): DistributedLockModuleOptions {
          return { connection: { mode: 'single', port }, keyPrefix: 'class:' };
        }
      }
      await withApp([DistributedLockModule.forRootAsync({ useClass: LockOptionsFactory })], async (locks) => {
        expect(locks.keyPrefix).toBe('class:');
      });
    });

    it('is global by default; with isGlobal: false, feature modules must import it', async () => {
      @Controller()
      class Locked {
        @Get() @DistributedLock('g') get(): string {
          return 'ok';
        }
      }
      @Module({ controllers: [Locked] })
      class FeatureModule {}
      const connection = { mode: 'single' as const, port: redis.server().port };
      await withApp([DistributedLockModule.forRoot({ connection }), FeatureModule], async (locks) => {
        expect(locks).toBeInstanceOf(LockService);
      });
      const error = await Test.createTestingModule({ imports: [DistributedLockModule.forRoot({ connection, isGlobal: false }), FeatureModule] })
        .compile()
        .catch((e: unknown) => e);
      expect(String(error)).toMatch(/LockService/);
    });

    it('an invalid environment fails start-up with an error naming the variable', async () => {
      process.env.DISTRIBUTED_LOCK_REDIS_MODE = 'sentinel';
      process.env.DISTRIBUTED_LOCK_REDIS_SENTINELS = '127.0.0.1:26379';
      const error = await startupError({});
      expect(error).toBeInstanceOf(InvalidLockConfigError);
      expect((error as InvalidLockConfigError).setting).toBe('DISTRIBUTED_LOCK_REDIS_SENTINEL_MASTER');
    });

    it('unknown and invalid module options fail start-up', async () => {
      expect(await startupError({ defaultWaittime: 5 } as never)).toBeInstanceOf(InvalidLockConfigError);
      expect(await startupError({ busyStatus: 500 } as never)).toBeInstanceOf(InvalidLockConfigError);
      const wait = (await startupError({ env: { DISTRIBUTED_LOCK_WAIT_TIME: 'forever' } })) as InvalidLockConfigError;
      expect(wait.setting).toBe('DISTRIBUTED_LOCK_WAIT_TIME');
    });
  });

  describe('reaching Redis', () => {
    it('an unreachable Redis fails start-up at once with a clear error', async () => {
      const port = await freePort();
      const error = await startupError({ connection: { mode: 'single', host: '127.0.0.1', port } });
      expect(error).toBeInstanceOf(LockConnectionError);
      expect((error as LockConnectionError).message).toContain(`127.0.0.1:${port}`);
      expect((error as LockConnectionError).message).toMatch(/ECONNREFUSED/);
    });

    it('lazyConnect boots without Redis and the first lock call fails with a typed error', async () => {
      const port = await freePort();
      await withApp([DistributedLockModule.forRoot({ connection: { mode: 'single', port }, lazyConnect: true })], async (locks) => {
        await expect(locks.tryLock('lazy')).rejects.toBeInstanceOf(LockBackendError);
      });
    });
  });

  describe('credentials and ACL', () => {
    let secured: RedisServer;
    beforeAll(async () => {
      secured = await RedisServer.start({
        // One config line per --user; each ACL rule is its own argument.
        args: [
          ...['--user', 'default', 'off'],
          ...['--user', 'admin', 'on', '>admin-pw', '~*', '&*', '+@all'],
          // The rule the README recommends for a lock user (INFO: ioredis' ready check).
          ...['--user', 'locker', 'on', '>locker-pw', '~lock:*', '&lock:*', '+@all', '-@dangerous', '+info'],
        ],
      });
    });
    afterAll(async () => {
      await secured.stop();
      secured.cleanup();
    });

    it('username and password from the environment work for a user confined to the key prefix', async () => {
      const env = {
        DISTRIBUTED_LOCK_REDIS_PORT: String(secured.port),
        DISTRIBUTED_LOCK_REDIS_USERNAME: 'locker',
        DISTRIBUTED_LOCK_REDIS_PASSWORD: 'locker-pw',
      };
      await withApp([DistributedLockModule.forRoot({ env })], async (locks) => {
        const handle = await locks.lock('acl');
        expect(handle.token).toBeGreaterThan(0);
        await handle.unlock();
      });
    });

    it('keys outside the ACL pattern are refused by the server, as a typed error', async () => {
      const env = {
        DISTRIBUTED_LOCK_REDIS_PORT: String(secured.port),
        DISTRIBUTED_LOCK_REDIS_USERNAME: 'locker',
        DISTRIBUTED_LOCK_REDIS_PASSWORD: 'locker-pw',
        DISTRIBUTED_LOCK_KEY_PREFIX: 'elsewhere:',
      };
      await withApp([DistributedLockModule.forRoot({ env })], async (locks) => {
        const error = (await locks.tryLock('acl').catch((e: unknown) => e)) as LockBackendError;
        expect(error).toBeInstanceOf(LockBackendError);
        expect(error.message).toMatch(/NOPERM|permission/i);
      });
    });

    it('a wrong password fails start-up with the server message, not as "lock not acquired"', async () => {
      const error = await startupError({
        env: { DISTRIBUTED_LOCK_REDIS_PORT: String(secured.port), DISTRIBUTED_LOCK_REDIS_USERNAME: 'locker', DISTRIBUTED_LOCK_REDIS_PASSWORD: 'nope' },
      });
      expect(error).toBeInstanceOf(LockConnectionError);
      expect((error as Error).message).toMatch(/WRONGPASS/);
    });
  });

  it('app.close() releases held locks, fails pending waits, closes connections, and lets the process exit', async () => {
    const admin = redis.server().client();
    const clientsBefore = Number(/connected_clients:(\d+)/.exec(await admin.info('clients'))![1]);
    const other = await redis.client();
    const busy = await other.lock('close:busy', '30s');
    const worker = WorkerProcess.start('nest-app-worker.mjs', {
      DISTRIBUTED_LOCK_REDIS_MODE: 'single',
      DISTRIBUTED_LOCK_REDIS_HOST: '127.0.0.1',
      DISTRIBUTED_LOCK_REDIS_PORT: redis.server().port,
      DISTRIBUTED_LOCK_WATCHDOG_TIMEOUT: '3s',
    });
    const ready = await worker.waitForType('ready');
    expect(ready.stats).toEqual({ held: 1, renewing: 1, waitingChannels: 1 });
    expect(await admin.exists('lock:{close:held}')).toBe(1);

    worker.send('close');
    const closed = await worker.waitForType('closed');
    expect(closed).toMatchObject({ waiter: 'LOCK_CLIENT_CLOSED', heldSignalAborted: true, stats: { held: 0, renewing: 0 } });
    // Exits by itself: no timer, socket or subscription keeps it alive.
    expect(await worker.exited).toEqual({ code: 0, signal: null });
    expect(await admin.exists('lock:{close:held}')).toBe(0);
    const clientsAfter = Number(/connected_clients:(\d+)/.exec(await admin.info('clients'))![1]);
    expect(clientsAfter).toBe(clientsBefore + 2); // only `other` (command + subscriber) remains
    await busy.unlock();
  });
});
