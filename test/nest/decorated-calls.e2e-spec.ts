import 'reflect-metadata';
import { Body, Controller, Get, HttpException, Injectable, Param, Post, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { of, type Observable } from 'rxjs';
import request from 'supertest';
import {
  CurrentLock,
  DistributedLock,
  DistributedLockInterceptor,
  DistributedLockModule,
  LockService,
  type LockAcquireTimeoutError,
  type LockClient,
  type LockHandle,
} from 'nestjs-distributed-lock';
import { useRedis } from '../harness/use-redis.js';

/**
 * The interceptor's documented extension points, used as the docs say: a subclass registered
 * globally scopes every name by tenant and answers a busy lock its own way; the interceptor that
 * @DistributedLock registers on the handler steps aside, so the subclass's hooks are the ones applied.
 */
@Injectable()
class TenantLockInterceptor extends DistributedLockInterceptor {
  protected override nameScope(context: ExecutionContext): string {
    const tenant = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>().headers['x-tenant'];
    return tenant ? `tenant:${tenant}:` : '';
  }

  protected override busy(error: LockAcquireTimeoutError): unknown {
    return new HttpException({ code: error.code, retryAfterMs: error.retryAfterMs, by: 'TenantLockInterceptor' }, 429);
  }
}

@Controller()
class ShopController {
  constructor(private readonly locks: LockService) {}

  @Post('products/:id')
  @DistributedLock({ name: 'product:{params.id}', waitTime: 50 })
  async buy(@CurrentLock() lock: LockHandle): Promise<{ lock: string; holds: number }> {
    return { lock: lock.name, holds: await this.locks.getHoldCount(lock.name) };
  }

  @Post('transfer')
  @DistributedLock({ name: ['account:{body.from}', 'account:{body.to}'], waitTime: 0, onBusy: (info) => ({ busy: info.name }) })
  transfer(@Body() _body: { from: string; to: string }): { busy: undefined } {
    return { busy: undefined };
  }

  /** Returns its stream only once its 80 ms lease is gone: 'abort-request' has answered by then. */
  @Get('late-stream/:id')
  @DistributedLock({ name: 'late-stream:{params.id}', leaseTime: '80ms', onLost: 'abort-request' })
  async lateStream(@Param('id') _id: string, @CurrentLock() lock: LockHandle): Promise<Observable<string>> {
    await new Promise((resolve) => lock.signal.addEventListener('abort', resolve, { once: true }));
    return of('too late');
  }
}

describe('decorated request calls: the interceptor extension points, multi-key names, abandoned streams', () => {
  const redis = useRedis();
  let app: INestApplication;
  let other: LockClient;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ connection: { mode: 'single', host: '127.0.0.1', port: redis.server().port }, shutdownTimeout: '10s' })],
      controllers: [ShopController],
      providers: [{ provide: APP_INTERCEPTOR, useClass: TenantLockInterceptor }],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });
  beforeEach(async () => {
    other = await redis.client();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('a subclass registered globally scopes the names of every decorated handler; the lock is taken once', async () => {
    const locks = app.get(LockService);
    const acquired: string[] = [];
    const record = ({ name }: { name: string }): number => acquired.push(name);
    locks.events.on('acquired', record);
    const response = await request(app.getHttpServer()).post('/products/1').set('x-tenant', 'acme').expect(201);
    locks.events.off('acquired', record);
    expect(response.body).toEqual({ lock: 'tenant:acme:product:1', holds: 1 });
    expect(acquired).toEqual(['tenant:acme:product:1']);
    // Without the header, no scope.
    expect((await request(app.getHttpServer()).post('/products/1').expect(201)).body).toEqual({ lock: 'product:1', holds: 1 });
  });

  it("the subclass's busy answer is the one the client gets", async () => {
    const holder = await other.lock('tenant:acme:product:2', '20s');
    const response = await request(app.getHttpServer()).post('/products/2').set('x-tenant', 'acme').expect(429);
    expect(response.body).toMatchObject({ code: 'LOCK_ACQUIRE_TIMEOUT', by: 'TenantLockInterceptor' });
    expect(response.body.retryAfterMs).toBeGreaterThan(1000);
    await holder.unlock();
    // Another tenant's lock of the same product is another lock.
    await request(app.getHttpServer()).post('/products/2').set('x-tenant', 'globex').expect(201);
  });

  it("onBusy's info names a multi-lock by its names joined with ', '", async () => {
    const holder = await other.lock('account:b', '20s');
    const response = await request(app.getHttpServer()).post('/transfer').send({ from: 'a', to: 'b' }).expect(201);
    expect(response.body).toEqual({ busy: 'account:a, account:b' });
    await holder.unlock();
  });

  it("a stream returned after 'abort-request' answered ends its call at once: app.close() does not wait out shutdownTimeout", async () => {
    const response = await request(app.getHttpServer()).get('/late-stream/1');
    expect(response.status).toBe(503);
    expect(response.body).toMatchObject({ code: 'LOCK_LOST' });
    const started = performance.now();
    await app.close();
    expect(performance.now() - started).toBeLessThan(5000); // shutdownTimeout is 10 s
  });
});
