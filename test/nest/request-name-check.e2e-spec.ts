import 'reflect-metadata';
import { Controller, Injectable, type ExecutionContext } from '@nestjs/common';
import { Args, Query, Resolver } from '@nestjs/graphql';
import { MessagePattern } from '@nestjs/microservices';
import { Interval } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import { DistributedLock, DistributedLockModule } from 'nestjs-distributed-lock';
import { useRedis } from '../harness/use-redis.js';

/**
 * The start-up check of request keys, beyond HTTP routes (test/nest/route-params.e2e-spec.ts) and the
 * one bad key per transport of test/transports: what each kind of handler may read, and may not.
 * Only the explorer runs here (no GraphQL schema, no server): it reads the handlers' metadata.
 */
@Resolver()
class FineResolver {
  @Query(() => String)
  @DistributedLock('cart:{user.id}:{headers.x-tenant}:{data.id}')
  cart(@Args('id') _id: string): string {
    return 'cart';
  }
}

@Controller()
class FineMessages {
  @MessagePattern('orders')
  @DistributedLock({ name: (context: ExecutionContext) => `order:${context.switchToRpc().getData<{ id: string }>().id}` })
  order(): string {
    return 'order';
  }
}

@WebSocketGateway()
class FineGateway {
  @SubscribeMessage('rooms')
  @DistributedLock('room:{data.room}')
  join(): string {
    return 'joined';
  }
}

@Injectable()
class ContextKeyedJob {
  @Interval(3_600_000)
  @DistributedLock({ name: (context: ExecutionContext) => `job:${context.getType()}` })
  run(): void {}
}

@Resolver()
class ParamsResolver {
  @Query(() => String)
  @DistributedLock('item:{params.id}')
  item(): string {
    return 'item';
  }
}

describe('request keys are checked at start-up against what their handlers receive', () => {
  const redis = useRedis();

  async function init(parts: { providers?: (new () => unknown)[]; controllers?: (new () => unknown)[] }): Promise<unknown> {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ connection: { mode: 'single', host: '127.0.0.1', port: redis.server().port } })],
      ...parts,
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    try {
      await app.init();
      return undefined;
    } catch (error) {
      return error;
    } finally {
      await app.close();
    }
  }

  it("control: a resolver reading data, user and headers, a message pattern's key function and a gateway reading data all start", async () => {
    expect(await init({ providers: [FineResolver, FineGateway], controllers: [FineMessages] })).toBeUndefined();
  });

  it('a resolver reading {params...} fails app.init, naming it and what it may read', async () => {
    const error = await init({ providers: [ParamsResolver] });
    expect(error).toMatchObject({ code: 'LOCK_INVALID_CONFIG' });
    expect((error as Error).message).toMatch(
      /ParamsResolver\.item: template "item:\{params\.id\}" reads \{params\.\.\.\}, which a GraphQL resolver's requests do not carry.*\{data\.\.\.\}, \{user\.\.\.\}, \{headers\.\.\.\}/,
    );
  });

  it('a scheduled job whose key is a function of the ExecutionContext fails app.init: a scheduled run has none', async () => {
    const error = await init({ providers: [ContextKeyedJob] });
    expect(error).toMatchObject({ code: 'LOCK_INVALID_CONFIG' });
    expect((error as Error).message).toMatch(/ContextKeyedJob\.run: a name function reads the ExecutionContext, but a scheduled job has no request/);
  });
});
