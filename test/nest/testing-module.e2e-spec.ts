import 'reflect-metadata';
import { Controller, Injectable, Module, Param, Post, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { CurrentLock, DistributedLock, DistributedLockHealthIndicator, DistributedLockModule, LockService, type LockHandle } from 'nestjs-distributed-lock';
import { createInMemoryLockService, DistributedLockTestingModule, InMemoryLockStore } from 'nestjs-distributed-lock/testing';
import { freePort } from 'redis-topology';
import { until } from '../harness/wait.js';
import { LockKeys } from '../../libs/distributed-lock/src/core/scripts/lock-keys.js';

/*
 * What a user's unit test looks like with `nestjs-distributed-lock/testing`: no redis-server is
 * started by this file, and the environment points at a port where nothing listens, so any attempt
 * to reach Redis would fail the test.
 */

@Injectable()
class CounterService {
  value = 0;

  /** Read, yield, write: concurrent calls lose updates unless the lock serialises them. */
  @DistributedLock({ nameFromArgs: (id: string) => `counter:${id}`, waitTime: '5s' })
  async bump(id: string): Promise<number> {
    return this.bumpUnlocked(id);
  }

  async bumpUnlocked(_id: string): Promise<number> {
    const read = this.value;
    await new Promise((resolve) => setTimeout(resolve, 1));
    this.value = read + 1;
    return this.value;
  }
}

let release: (() => void) | undefined;

@Controller('orders')
class OrdersController {
  @Post(':id/pay')
  @DistributedLock({ name: 'order:{params.id}', waitTime: 0 })
  async pay(@Param('id') id: string, @CurrentLock() lock: LockHandle): Promise<{ id: string; token: number }> {
    await new Promise<void>((resolve) => (release = resolve));
    return { id, token: lock.token };
  }
}

@Module({ providers: [CounterService], controllers: [OrdersController], exports: [CounterService] })
class OrdersModule {}

/** An application module as users write it: the real module, configured from the environment. */
@Module({ imports: [DistributedLockModule.forRoot(), OrdersModule] })
class AppModule {}

describe('nestjs-distributed-lock/testing: unit tests without Redis', () => {
  const saved = { host: process.env.DISTRIBUTED_LOCK_REDIS_HOST, port: process.env.DISTRIBUTED_LOCK_REDIS_PORT };
  let app: INestApplication | undefined;

  beforeAll(async () => {
    // Nothing listens there: a test that reached for Redis would fail to start.
    process.env.DISTRIBUTED_LOCK_REDIS_HOST = '127.0.0.1';
    process.env.DISTRIBUTED_LOCK_REDIS_PORT = String(await freePort());
  });
  afterEach(async () => {
    release?.();
    await app?.close();
    app = undefined;
  });
  afterAll(() => {
    process.env.DISTRIBUTED_LOCK_REDIS_HOST = saved.host;
    process.env.DISTRIBUTED_LOCK_REDIS_PORT = saved.port;
    if (saved.host === undefined) delete process.env.DISTRIBUTED_LOCK_REDIS_HOST;
    if (saved.port === undefined) delete process.env.DISTRIBUTED_LOCK_REDIS_PORT;
  });

  it('control: the real module from the environment cannot start here', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    await expect(moduleRef.init()).rejects.toMatchObject({ code: 'LOCK_CONNECTION_FAILED' });
    await moduleRef.close();
  });

  it('DistributedLockTestingModule: decorated providers exclude each other (control: unlocked calls lose updates)', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [DistributedLockTestingModule.forRoot(), OrdersModule] }).compile();
    app = moduleRef.createNestApplication();
    await app.init();
    const counter = app.get(CounterService);

    await Promise.all(Array.from({ length: 10 }, () => counter.bumpUnlocked('a')));
    expect(counter.value).toBeLessThan(10);

    counter.value = 0;
    const acquired: string[] = [];
    app.get(LockService).events.on('acquired', ({ name }) => acquired.push(name));
    await Promise.all(Array.from({ length: 10 }, () => counter.bump('a')));
    expect(counter.value).toBe(10);
    expect(acquired).toEqual(Array.from({ length: 10 }, () => 'counter:a'));

    const store = app.get(InMemoryLockStore);
    expect(store.keyspace.exists('lock:{counter:a}')).toBe(0);
  });

  it('over HTTP: the decorator answers 423 with Retry-After while a request holds the lock, and the health check is up', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [DistributedLockTestingModule.forRoot(), OrdersModule] }).compile();
    app = moduleRef.createNestApplication();
    await app.init();
    const server = app.getHttpServer();

    const first = request(server)
      .post('/orders/7/pay')
      .then((response) => response);
    const locks = app.get(LockService);
    await until(async () => locks.isLocked('order:7'), 'the first request to hold the lock');
    const busy = await request(server).post('/orders/7/pay');
    expect(busy.status).toBe(423);
    expect(Number(busy.headers['retry-after'])).toBeGreaterThan(0);
    expect(busy.body).toMatchObject({ code: 'LOCK_ACQUIRE_TIMEOUT' });

    release!();
    const paid = await first;
    expect(paid.status).toBe(201);
    expect(paid.body).toEqual({ id: '7', token: expect.any(Number) });
    expect(paid.body.token).toBeGreaterThan(0);
    expect(await locks.isLocked('order:7')).toBe(false);

    const health = await app.get(DistributedLockHealthIndicator).isHealthy('locks');
    expect(health.locks.status).toBe('up');
  });

  it('overrideProvider(LockService) keeps the application module as it is', async () => {
    const store = new InMemoryLockStore();
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
      .overrideProvider(LockService)
      .useFactory({ factory: () => createInMemoryLockService({ store }) })
      .compile();
    app = moduleRef.createNestApplication();
    await app.init(); // would fail with LOCK_CONNECTION_FAILED without the override (see the control)
    const counter = app.get(CounterService);
    const acquired: string[] = [];
    app.get(LockService).events.on('acquired', ({ name }) => acquired.push(name));
    await Promise.all(Array.from({ length: 5 }, () => counter.bump('b')));
    expect(counter.value).toBe(5);
    expect(acquired).toEqual(Array.from({ length: 5 }, () => 'counter:b'));
    expect(store.keyspace.exists(new LockKeys('lock:').fence('counter:b'))).toBe(1);

    const locks = app.get(LockService);
    const held = await locks.lock('on-close', '30s');
    await app.close();
    app = undefined;
    // app.close() released what the process held and closed the service's subscriber connection.
    expect(held.isHeld).toBe(false);
    expect(store.keyspace.exists('lock:{on-close}')).toBe(0);
    expect(store.status).toBe('ready'); // the store was given, so it is the test's to close, as with an ioredis client
  });
});
