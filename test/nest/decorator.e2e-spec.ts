import 'reflect-metadata';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  Body,
  Controller,
  Get,
  HttpException,
  Injectable,
  Param,
  Post,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { interval, mergeMap, take, type Observable } from 'rxjs';
import request from 'supertest';
import { CurrentLock, DistributedLock, DistributedLockModule, LockService, type LockHandle } from 'nestjs-distributed-lock';
import { useRedis } from '../harness/use-redis.js';
import { nextEvent, until } from '../harness/wait.js';
import type { Redis } from 'ioredis';

/** Handler entries, to prove which handlers ran. */
const entered: string[] = [];
/** Opens the /slow handlers waiting inside their lock, oldest first. */
const slowGates: (() => void)[] = [];

@Injectable()
class FakeAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    context.switchToHttp().getRequest<{ user: unknown }>().user = { id: 'u-7' };
    return true;
  }
}

class PaymentRequiredError extends HttpException {
  constructor() {
    super({ message: 'card declined', reason: 'business' }, 402);
  }
}

@Controller()
class ShopController {
  constructor(private readonly locks: LockService) {}

  @Post('products/:id/buy')
  @DistributedLock({ name: 'product:{params.id}', waitTime: 100 })
  async buy(@Param('id') id: string, @CurrentLock() lock: LockHandle) {
    entered.push(`buy:${id}`);
    return { lock: lock.name, token: lock.token, held: await this.locks.isHeldByCurrentContext(`product:${id}`) };
  }

  @Get('search')
  @DistributedLock('sku:{query.sku}:{headers.x-tenant}')
  search() {
    return { lock: this.locks.currentLock()?.name };
  }

  @Post('orders')
  @DistributedLock('order:{body.order.id}')
  order(@Body() _body: unknown) {
    entered.push('order');
    return { lock: this.locks.currentLock()?.name };
  }

  @Get('me')
  @UseGuards(FakeAuthGuard)
  @DistributedLock('user:{user.id}')
  me() {
    return { lock: this.locks.currentLock()?.name };
  }

  @Get('fn/:a')
  @DistributedLock({ name: (ctx: ExecutionContext) => `fn:${ctx.switchToHttp().getRequest<{ params: { a: string } }>().params.a.toUpperCase()}` })
  byFunction() {
    return { lock: this.locks.currentLock()?.name };
  }

  @Get('fail')
  @DistributedLock('fail')
  fail() {
    entered.push('fail');
    throw new PaymentRequiredError();
  }

  @Get('crash')
  @DistributedLock('crash')
  async crash() {
    throw new Error('boom');
  }

  @Get('stream')
  @DistributedLock('stream')
  stream(): Observable<{ emitted: number; lockedWhileEmitting: boolean }> {
    return interval(5).pipe(
      take(3),
      mergeMap(async (i) => ({ emitted: i, lockedWhileEmitting: await this.locks.isLocked('stream') })),
    );
  }

  @Get('nested')
  @DistributedLock('nested')
  async nested() {
    // The handler runs as the owner of its lock: taking the same lock again re-enters.
    const inner = await this.locks.lock('nested', { waitTime: 200 });
    const holds = await this.locks.getHoldCount('nested');
    await inner.unlock();
    return { holds };
  }

  /** The seed's in-method style: lock by name, work, unlock by name, in one request. */
  @Post('in-method/:key')
  async inMethod(@Param('key') key: string) {
    await this.locks.lock(`in-method:${key}`);
    try {
      return { held: await this.locks.isHeldByCurrentContext(`in-method:${key}`) };
    } finally {
      await this.locks.unlock(`in-method:${key}`);
    }
  }

  /** Held until the test opens its gate; watchdog-renewed, 100 ms wait. */
  @Post('slow')
  @DistributedLock({ name: 'slow', waitTime: 100 })
  async slow() {
    await new Promise<void>((resolve) => slowGates.push(resolve));
    return { ok: true };
  }

  @Post('counter/locked')
  @DistributedLock({ name: 'counter', waitTime: '10s' })
  async lockedIncrement() {
    return this.increment('counter:locked');
  }

  @Post('counter/unlocked')
  async unlockedIncrement() {
    return this.increment('counter:unlocked');
  }

  private async increment(key: string) {
    const redis = this.locks.redis as Redis;
    const value = Number((await redis.get(key)) ?? 0);
    await sleep(2);
    await redis.set(key, value + 1);
    return { value: value + 1 };
  }
}

describe('@DistributedLock over HTTP', () => {
  const redis = useRedis();
  let app: INestApplication;
  let locks: LockService;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ connection: { mode: 'single', host: '127.0.0.1', port: redis.server().port } })],
      controllers: [ShopController],
      providers: [FakeAuthGuard],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    locks = app.get(LockService);
  });
  afterAll(async () => {
    await app?.close();
  });
  beforeEach(() => {
    entered.length = 0;
  });

  it('acquires before the handler and releases before the response is sent', async () => {
    const response = await request(app.getHttpServer()).post('/products/42/buy').expect(201);
    expect(response.body).toEqual({ lock: 'product:42', token: expect.any(Number), held: true });
    expect(response.body.token).toBeGreaterThan(0);
    expect(await locks.isLocked('product:42')).toBe(false);
  });

  it.each([
    ['/search?sku=A-1', { 'x-tenant': 'acme' }, 'sku:A-1:acme'],
    ['/me', {}, 'user:u-7'],
    ['/fn/abc', {}, 'fn:ABC'],
  ])('resolves the key of %s', async (path, headers, name) => {
    const response = await request(app.getHttpServer()).get(path).set(headers).expect(200);
    expect(response.body).toEqual({ lock: name });
  });

  it('resolves a key from the body', async () => {
    const response = await request(app.getHttpServer())
      .post('/orders')
      .send({ order: { id: 9 } })
      .expect(201);
    expect(response.body).toEqual({ lock: 'order:9' });
  });

  it('a template field missing from the request is a 400, and the handler does not run', async () => {
    const response = await request(app.getHttpServer()).post('/orders').send({ order: {} }).expect(400);
    expect(response.body).toMatchObject({ code: 'LOCK_NAME_TEMPLATE' });
    expect(response.body.message).toContain('request.body.order.id');
    await request(app.getHttpServer()).get('/search').expect(400);
    expect(entered).toEqual([]);
  });

  it('answers 423 with Retry-After from the holder lease when the lock stays busy', async () => {
    const holder = await locks.lock('product:7', '20s');
    const response = await request(app.getHttpServer()).post('/products/7/buy').expect(423);
    expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(19);
    expect(Number(response.headers['retry-after'])).toBeLessThanOrEqual(20);
    expect(response.body).toMatchObject({ statusCode: 423, code: 'LOCK_ACQUIRE_TIMEOUT' });
    expect(entered).toEqual([]);
    await holder.unlock();
    await request(app.getHttpServer()).post('/products/7/buy').expect(201);
  });

  it('a watchdog-renewed lock: Retry-After from how long its holds last, not from its 30 s lease', async () => {
    const server = app.getHttpServer();
    // A first time-out here: from now on this process follows how long the lock's holds last.
    const first = request(server)
      .post('/slow')
      .then((response) => response);
    await until(() => slowGates.length === 1, 'the handler to hold the lock');
    expect((await request(server).post('/slow')).status).toBe(423);
    slowGates.shift()!();
    expect((await first).status).toBe(201);
    // A few holds of about 300 ms each, seen by this process.
    for (let i = 0; i < 3; i++) {
      const holding = request(server)
        .post('/slow')
        .then((response) => response);
      await until(() => slowGates.length === 1, 'the handler to hold the lock');
      await sleep(300);
      slowGates.shift()!();
      expect((await holding).status).toBe(201);
    }
    const holding = request(server)
      .post('/slow')
      .then((response) => response);
    await until(() => slowGates.length === 1, 'the handler to hold the lock');
    expect(await locks.remainTimeToLive('slow')).toBeGreaterThan(20_000); // the watchdog's lease
    const busy = await request(server).post('/slow').expect(423);
    expect(busy.headers['retry-after']).toBe('1'); // ceil(about 300 ms): the holds seen, not the lease
    expect(busy.body).toMatchObject({ code: 'LOCK_ACQUIRE_TIMEOUT' });
    expect(busy.body.retryAfterMs).toBeGreaterThan(0);
    expect(busy.body.retryAfterMs).toBeLessThanOrEqual(1000); // the same estimate as the header, in ms
    slowGates.shift()!();
    expect((await holding).status).toBe(201);
  });

  it('a business error reaches the client unchanged, and the lock is released', async () => {
    const response = await request(app.getHttpServer()).get('/fail').expect(402);
    expect(response.body).toEqual({ message: 'card declined', reason: 'business' });
    expect(entered).toEqual(['fail']);
    expect(await locks.isLocked('fail')).toBe(false);
    await request(app.getHttpServer()).get('/crash').expect(500);
    expect(await locks.isLocked('crash')).toBe(false);
  });

  it('an observable handler holds the lock until it completes', async () => {
    const response = await request(app.getHttpServer()).get('/stream').expect(200);
    expect(response.body).toEqual({ emitted: 2, lockedWhileEmitting: true });
    expect(await locks.isLocked('stream')).toBe(false);
  });

  it('code inside the handler re-enters the decorated lock', async () => {
    const response = await request(app.getHttpServer()).get('/nested').expect(200);
    expect(response.body).toEqual({ holds: 2 });
  });

  it('lock() and unlock() by name pair up inside one request (each request is a lock context)', async () => {
    const results = await Promise.all([1, 2, 3].map(() => request(app.getHttpServer()).post('/in-method/x').expect(201)));
    expect(results.map((r) => r.body)).toEqual([{ held: true }, { held: true }, { held: true }]);
    expect(await locks.isLocked('in-method:x')).toBe(false);
  });

  it('a client that hangs up while waiting stops the wait and leaves no subscription', async () => {
    const holder = await locks.lock('product:hang', '20s');
    const server = app.getHttpServer();
    if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const subscribedEvent = nextEvent(locks.events, 'subscription', (e: { subscribed: boolean }) => e.subscribed);
    const failed = nextEvent(locks.events, 'failed', (e: { name: string }) => e.name === 'product:hang');
    const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/products/hang/buy' });
    req.on('error', () => undefined);
    req.end();
    await subscribedEvent;
    req.destroy();
    const [event] = await failed;
    expect(event).toMatchObject({ outcome: 'aborted' });
    await until(() => locks.stats().waitingChannels === 0, 'the waiter to unsubscribe');
    expect(entered).toEqual([]);
    await holder.unlock();
  });

  it('concurrent requests on one key are serialised; the unprotected control loses updates', async () => {
    const N = 25;
    const server = request(app.getHttpServer());
    await Promise.all(Array.from({ length: N }, () => server.post('/counter/unlocked').expect(201)));
    await Promise.all(Array.from({ length: N }, () => server.post('/counter/locked').expect(201)));
    expect(Number(await (locks.redis as Redis).get('counter:unlocked'))).toBeLessThan(N);
    expect(Number(await (locks.redis as Redis).get('counter:locked'))).toBe(N);
  });
});

describe('@DistributedLock with busyStatus 409', () => {
  const redis = useRedis();

  it('answers 409 Conflict instead of 423', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ connection: { mode: 'single', port: redis.server().port }, busyStatus: 409, defaultWaitTime: 0 })],
      controllers: [ShopController],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    const locks = app.get(LockService);
    const holder = await locks.lock('stream', '5s');
    const response = await request(app.getHttpServer()).get('/stream').expect(409);
    expect(response.headers['retry-after']).toBeDefined();
    await holder.unlock();
    await app.close();
  });
});
