import 'reflect-metadata';
import { Controller, Get, Injectable, Module, Param, Post, SetMetadata, type INestApplication } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Cron, Interval, ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import {
  DistributedLock,
  DistributedLockModule,
  InvalidLockArgumentError,
  LockAcquireTimeoutError,
  LockNameTemplateError,
  LockService,
  ScheduledLock,
  type LockClient,
  type LockBusyInfo,
} from 'nestjs-distributed-lock';
import { useRedis } from '../harness/use-redis.js';
import { nextEvent, until } from '../harness/wait.js';

const ROLE = 'test:role';
const entered: string[] = [];
const gates = new Map<string, () => void>();
/** A promise the test resolves: lets a locked call sit inside its critical section until told. */
function gate(name: string): Promise<void> {
  return new Promise((resolve) => gates.set(name, resolve));
}
function open(name: string): void {
  gates.get(name)?.();
  gates.delete(name);
}

@Injectable()
class StockService {
  constructor(private readonly locks: LockService) {}

  /** Read-modify-write over an in-memory counter with a pause: loses updates without the lock. */
  counter = 0;

  @DistributedLock({ nameFromArgs: (sku: string) => `stock:${sku}`, waitTime: '10s' })
  async bump(sku: string, pause: Promise<void> | undefined): Promise<number> {
    const read = this.counter;
    await (pause ?? new Promise((resolve) => setImmediate(resolve)));
    this.counter = read + 1;
    return this.counter;
  }

  async bumpUnlocked(pause: Promise<void>): Promise<number> {
    const read = this.counter;
    await pause;
    this.counter = read + 1;
    return this.counter;
  }

  @DistributedLock({ name: 'order:{args.0.id}', waitTime: 0 })
  async order(order: { id?: string }): Promise<{ lock: string | undefined; held: boolean }> {
    entered.push(`order:${order.id}`);
    // Nested call on the same key: the same lock context re-enters instead of deadlocking.
    await this.orderAgain(order);
    return { lock: this.locks.currentLock()?.name, held: await this.locks.isHeldByCurrentContext(`order:${order.id}`) };
  }

  @DistributedLock({ nameFromArgs: (order: { id?: string }) => `order:${order.id}`, waitTime: 0 })
  async orderAgain(_order: { id?: string }): Promise<number> {
    return this.locks.getHoldCount(`order:${_order.id}`);
  }

  @DistributedLock({ name: 'busy:{args.0}', waitTime: 50 })
  async strict(_id: string): Promise<string> {
    entered.push('strict');
    return 'ran';
  }

  @DistributedLock({ name: 'busy:{args.0}', waitTime: 0, onBusy: 'skip' })
  async skipping(_id: string): Promise<string> {
    entered.push('skipping');
    return 'ran';
  }

  @DistributedLock({ name: 'busy:{args.0}', waitTime: 0, onBusy: (info: LockBusyInfo) => ({ busy: info.name, args: info.args, code: info.error.code }) })
  async custom(_id: string, _extra: number): Promise<unknown> {
    entered.push('custom');
    return 'ran';
  }

  @DistributedLock({ name: 'at-least:{args.0}', leaseTime: '20s', lockAtLeastFor: '15s' })
  async quick(_id: string): Promise<string> {
    return 'done';
  }

  @DistributedLock({ name: 'request:{params.id}' })
  async requestKeyed(): Promise<void> {
    entered.push('request-keyed');
  }

  // Metadata of other decorators, above and below ours, survive the wrapping.
  @SetMetadata(ROLE, 'above')
  @DistributedLock('meta-above')
  @SetMetadata('test:below', 'below')
  async withMetadata(): Promise<string> {
    return 'meta';
  }
}

@Injectable()
class Jobs {
  runs = 0;

  // @Cron below the lock (applied first), and a custom metadata: both survive.
  @ScheduledLock({ leaseTime: '5s' })
  @Cron('0 0 1 1 *', { name: 'jobs-cron', disabled: true })
  @SetMetadata(ROLE, 'job')
  async cronJob(): Promise<string> {
    this.runs += 1;
    return 'ran';
  }

  // @Interval above the lock (applied last, onto the wrapper).
  @Interval('jobs-interval', 3_600_000)
  @ScheduledLock({ name: 'jobs:interval' })
  async intervalJob(): Promise<void> {
    this.runs += 1;
  }
}

@Controller('items')
class ItemsController {
  constructor(private readonly locks: LockService) {}

  /** Key from the handler's (piped) arguments: the method wrapper locks, failures map to HTTP. */
  @Post(':id/args')
  @DistributedLock({ nameFromArgs: (id: string) => `item:${id}`, waitTime: 50 })
  async byArgs(@Param('id') id: string): Promise<{ lock: string | undefined }> {
    entered.push(`args:${id}`);
    return { lock: this.locks.currentLock()?.name };
  }

  /** Key from the request: the interceptor locks, and the wrapper does not lock a second time. */
  @Get(':id')
  @DistributedLock({ name: 'item:{params.id}', waitTime: 50 })
  async byRequest(@Param('id') id: string): Promise<{ holds: number }> {
    return { holds: await this.locks.getHoldCount(`item:${id}`) };
  }

  @Get(':id/skip')
  @DistributedLock({ name: 'item:{params.id}', waitTime: 0, onBusy: () => ({ skipped: true }) })
  skip(): { skipped: boolean } {
    return { skipped: false };
  }
}

describe('@DistributedLock on providers', () => {
  const redis = useRedis();
  let app: INestApplication;
  let other: LockClient;
  let service: StockService;

  beforeAll(async () => {
    @Module({
      // ScheduleModule first: its explorer reads the methods before ours runs; they are already wrapped.
      imports: [ScheduleModule.forRoot(), DistributedLockModule.forRoot({ connection: { mode: 'single', host: '127.0.0.1', port: redis.server().port } })],
      providers: [StockService, Jobs],
      controllers: [ItemsController],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    service = app.get(StockService);
  });
  beforeEach(async () => {
    entered.length = 0;
    other = await redis.client();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('serialises concurrent calls on one key across lock contexts; the unlocked control loses updates', async () => {
    service.counter = 0;
    const pauses = Array.from({ length: 5 }, (_, i) => gate(`c${i}`));
    const unlocked = pauses.map((pause) => service.bumpUnlocked(pause));
    for (let i = 0; i < 5; i++) open(`c${i}`);
    await Promise.all(unlocked);
    expect(service.counter).toBeLessThan(5);

    service.counter = 0;
    const locked = Array.from({ length: 5 }, () => service.bump('sku-1', undefined));
    expect((await Promise.all(locked)).sort()).toEqual([1, 2, 3, 4, 5]);
    expect(service.counter).toBe(5);
  });

  it('holds the lock named from the arguments while the method runs, and releases it after', async () => {
    const pause = gate('hold');
    const call = service.bump('sku-2', pause);
    await until(() => other.isLocked('stock:sku-2'), 'the lock to be taken');
    expect(await other.tryLock('stock:sku-2')).toBe(false);
    open('hold');
    await call;
    expect(await other.isLocked('stock:sku-2')).toBe(false);
  });

  it('{args.N.field} templates; nested decorated calls re-enter the same lock', async () => {
    expect(await service.order({ id: 'o-1' })).toEqual({ lock: 'order:o-1', held: true });
    expect(await other.isLocked('order:o-1')).toBe(false);
  });

  it('a missing argument field is a LockNameTemplateError and the method does not run', async () => {
    await expect(service.order({})).rejects.toBeInstanceOf(LockNameTemplateError);
    expect(entered).toEqual([]);
  });

  it("onBusy 'throw' (default): a LockAcquireTimeoutError with the holder's remaining lease", async () => {
    const holder = await other.lock('busy:x', '20s');
    const error = (await service.strict('x').catch((e: unknown) => e)) as LockAcquireTimeoutError;
    expect(error).toBeInstanceOf(LockAcquireTimeoutError);
    expect(error.code).toBe('LOCK_ACQUIRE_TIMEOUT');
    expect(error.retryAfterMs).toBeGreaterThan(0);
    await holder.unlock();
    expect(entered).toEqual([]);
  });

  it("onBusy 'skip' resolves undefined without running; a function gets name, args, error and supplies the result", async () => {
    const holder = await other.lock('busy:y', '20s');
    expect(await service.skipping('y')).toBeUndefined();
    expect(await service.custom('y', 7)).toEqual({ busy: 'busy:y', args: ['y', 7], code: 'LOCK_ACQUIRE_TIMEOUT' });
    expect(entered).toEqual([]);
    await holder.unlock();
    expect(await service.skipping('y')).toBe('ran');
  });

  it('lockAtLeastFor keeps the lock after a quick call; shutdown would release it (see shutdown spec)', async () => {
    expect(await service.quick('q')).toBe('done');
    expect(await other.isLocked('at-least:q')).toBe(true);
    expect(await other.tryLock('at-least:q')).toBe(false);
  });

  it('a key that reads the request fails clearly when a provider method is called outside a request', async () => {
    const error = (await service.requestKeyed().catch((e: unknown) => e)) as InvalidLockArgumentError;
    expect(error).toBeInstanceOf(InvalidLockArgumentError);
    expect(error.message).toMatch(/StockService\.requestKeyed.*nameFromArgs/);
    expect(entered).toEqual([]);
  });

  it('keeps the metadata of other decorators, above and below, and the method name', () => {
    const reflector = app.get(Reflector);
    const method = StockService.prototype.withMetadata;
    expect(method.name).toBe('withMetadata');
    expect(reflector.get(ROLE, method)).toBe('above');
    expect(reflector.get('test:below', method)).toBe('below');
    expect(reflector.get(ROLE, Jobs.prototype.cronJob)).toBe('job');
  });

  it('@Cron and @Interval jobs registered by @nestjs/schedule run through the lock (skipped while held elsewhere)', async () => {
    const registry = app.get(SchedulerRegistry);
    const jobs = app.get(Jobs);
    expect(registry.getIntervals()).toContain('jobs-interval');
    const cron = registry.getCronJob('jobs-cron');
    jobs.runs = 0;
    const holder = await other.lock('schedule:Jobs.cronJob', '20s');
    const skipped = nextEvent(app.get(LockService).events, 'failed', (e: { name: string }) => e.name === 'schedule:Jobs.cronJob');
    await cron.fireOnTick();
    await skipped;
    expect(jobs.runs).toBe(0);
    await holder.unlock();
    const released = nextEvent(app.get(LockService).events, 'released', (e: { name: string }) => e.name === 'schedule:Jobs.cronJob');
    await cron.fireOnTick();
    await released;
    expect(jobs.runs).toBe(1);
  });

  it('an instance not created by Nest fails with a typed error instead of running unlocked', async () => {
    const loose = new StockService(app.get(LockService));
    await expect(loose.bump('z', undefined)).rejects.toMatchObject({ code: 'LOCK_INVALID_CONFIG' });
  });

  describe('on controllers', () => {
    it('nameFromArgs on a route handler: the wrapper locks with the piped argument; busy answers 423 with Retry-After', async () => {
      const http = request(app.getHttpServer());
      expect((await http.post('/items/a1/args').expect(201)).body).toEqual({ lock: 'item:a1' });
      const holder = await other.lock('item:a2', '20s');
      const busy = await http.post('/items/a2/args').expect(423);
      expect(Number(busy.headers['retry-after'])).toBeGreaterThanOrEqual(19);
      expect(busy.body).toMatchObject({ code: 'LOCK_ACQUIRE_TIMEOUT' });
      await holder.unlock();
      expect(entered).toEqual(['args:a1']);
    });

    it('a request key is locked once, by the interceptor (hold count 1, one acquisition)', async () => {
      const locks = app.get(LockService);
      let acquisitions = 0;
      const count = ({ name }: { name: string }): void => {
        if (name === 'item:r1') acquisitions += 1;
      };
      locks.events.on('acquired', count);
      expect((await request(app.getHttpServer()).get('/items/r1').expect(200)).body).toEqual({ holds: 1 });
      locks.events.off('acquired', count);
      expect(acquisitions).toBe(1);
    });

    it('onBusy function on a route: its result is the response', async () => {
      const holder = await other.lock('item:s1', '20s');
      expect((await request(app.getHttpServer()).get('/items/s1/skip').expect(200)).body).toEqual({ skipped: true });
      await holder.unlock();
      expect((await request(app.getHttpServer()).get('/items/s1/skip').expect(200)).body).toEqual({ skipped: false });
    });
  });
});

describe('@DistributedLock options are checked when the class is defined', () => {
  const define = (decorate: () => unknown): void => {
    class Target {
      method(): void {}
    }
    const descriptor = Object.getOwnPropertyDescriptor(Target.prototype, 'method')!;
    (decorate() as MethodDecorator)(Target.prototype, 'method', descriptor);
  };

  it.each([
    ['@DistributedLock onBusy', () => DistributedLock({ name: 'x', onBusy: 'ignore' as never })],
    ['@DistributedLock name', () => DistributedLock({ name: 'x', nameFromArgs: (() => 'y') as never } as never)],
    ['@DistributedLock nameFromArgs', () => DistributedLock({ nameFromArgs: 'x' as never })],
    ['lockAtLeastFor', () => DistributedLock({ name: 'x', leaseTime: '1s', lockAtLeastFor: '1s' })],
    ['lock name', () => DistributedLock('x:{args.first}')],
    ['lock name', () => DistributedLock('x:{args.0}:{params.id}')],
    ['@DistributedLock options', () => DistributedLock({ name: 'x', leasetime: '1s' } as never)],
    ['@ScheduledLock name', () => ScheduledLock({ name: 'job:{params.id}' })],
    ['leaseTime', () => ScheduledLock({ leaseTime: -1 })],
  ])('%s', (argument, decorate) => {
    let error: unknown;
    try {
      define(decorate);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidLockArgumentError);
    expect((error as InvalidLockArgumentError).argument).toBe(argument);
  });

  it('a method gets at most one lock decorator', () => {
    expect(() => {
      class Twice {
        @DistributedLock('a')
        @DistributedLock('b')
        method(): void {}
      }
      return Twice;
    }).toThrow(/already has a lock decorator/);
  });

  it('nameFromArgs is typed by the method parameters', () => {
    class Typed {
      @DistributedLock({ nameFromArgs: (id: string) => `p:${id}` })
      async fine(id: string, _qty: number): Promise<string> {
        return id;
      }

      // @ts-expect-error the key builder takes a string, the method a number
      @DistributedLock({ nameFromArgs: (id: string) => `p:${id}` })
      async wrong(id: number): Promise<number> {
        return id;
      }
    }
    expect(typeof Typed).toBe('function');
  });
});
