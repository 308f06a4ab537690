import 'reflect-metadata';
import { Controller, Module, Param, Post } from '@nestjs/common';
import { RouterModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { DistributedLock, DistributedLockModule } from 'nestjs-distributed-lock';
import { useRedis } from '../harness/use-redis.js';

@Controller('products')
class MisnamedController {
  @Post(':id/buy')
  @DistributedLock('product:{params.sku}') // the route has :id, not :sku
  buy(@Param('id') id: string) {
    return { id };
  }
}

@Controller('products')
class WellNamedController {
  @Post(':id/buy')
  @DistributedLock('product:{params.id}')
  buy(@Param('id') id: string) {
    return { id };
  }
}

/** A parameter that comes from RouterModule's path for the module, or from the global prefix. */
@Controller('orders')
class NestedController {
  @Post(':order/pay')
  @DistributedLock('pay:{params.tenant}:{params.region}:{params.order}')
  pay() {
    return { ok: true };
  }
}

@Module({ controllers: [NestedController] })
class TenantModule {}

describe('key templates are checked against the route at start-up', () => {
  const redis = useRedis();
  const lockModule = (): ReturnType<typeof DistributedLockModule.forRoot> =>
    DistributedLockModule.forRoot({ connection: { mode: 'single', host: '127.0.0.1', port: redis.server().port } });

  it('a template reading a parameter the route does not have fails start-up, naming the handler', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [lockModule()], controllers: [MisnamedController] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    const error = await app.init().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'LOCK_INVALID_CONFIG' });
    expect((error as Error).message).toMatch(/MisnamedController\.buy/);
    expect((error as Error).message).toMatch(/\{params\.sku\}.*only :id/);
    await app.close();
  });

  it('control: the same template on a route that has the parameter starts and locks', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [lockModule()], controllers: [WellNamedController] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    await request(app.getHttpServer()).post('/products/7/buy').expect(201, { id: '7' });
    await app.close();
  });

  it('parameters of a RouterModule path and of the global prefix count', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [lockModule(), TenantModule, RouterModule.register([{ path: 'tenants/:tenant', module: TenantModule }])],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    app.setGlobalPrefix(':region');
    await app.init();
    await request(app.getHttpServer()).post('/eu/tenants/acme/orders/9/pay').expect(201);
    await app.close();
  });
});
