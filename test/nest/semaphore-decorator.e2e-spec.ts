import 'reflect-metadata';
import { Controller, Injectable, Param, Post, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { CurrentLock, DistributedLockModule, DistributedSemaphore, InvalidLockArgumentError, LockHandle, PermitsHandle } from 'nestjs-distributed-lock';
import { useRedis } from '../harness/use-redis.js';
import { until } from '../harness/wait.js';

/** A gate the handlers wait on, opened by the test. */
function newGate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}
let gate = newGate();
let inside = 0;
let mostInside = 0;

async function work(): Promise<void> {
  inside++;
  mostInside = Math.max(mostInside, inside);
  await gate.promise;
  inside--;
}

@Injectable()
class CrawlService {
  @DistributedSemaphore({ nameFromArgs: (region: string) => `crawl:${region}`, size: 1, waitTime: 0, onBusy: 'skip' })
  async crawl(region: string): Promise<string> {
    await work();
    return `crawled ${region}`;
  }

  @DistributedSemaphore({ name: 'render:{args.0}', size: 3, permitsPerCall: 2, waitTime: '10s' })
  async render(_job: string): Promise<number> {
    await work();
    return inside;
  }
}

@Controller()
class ExportController {
  @Post('exports/:tenant')
  @DistributedSemaphore({ name: 'exports:{params.tenant}', size: 2, waitTime: 0 })
  async export(@Param('tenant') _tenant: string, @CurrentLock() lock: LockHandle) {
    await work();
    return { token: lock.token, permits: (lock as PermitsHandle).permits };
  }
}

describe('@DistributedSemaphore on routes and providers', () => {
  const redis = useRedis();
  let app: INestApplication;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ connection: { mode: 'single', host: '127.0.0.1', port: redis.server().port } })],
      controllers: [ExportController],
      providers: [CrawlService],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });
  afterAll(async () => {
    await app?.close();
  });
  beforeEach(() => {
    gate = newGate();
    inside = 0;
    mostInside = 0;
  });

  it('a route: as many requests at once as permits, the next one 423 with Retry-After; @CurrentLock() gets the permits handle', async () => {
    const server = app.getHttpServer();
    const running = [request(server).post('/exports/acme'), request(server).post('/exports/acme')].map((req) => req.then((res) => res));
    await until(() => inside === 2, 'two requests inside');
    const busy = await request(server).post('/exports/acme');
    expect(busy.status).toBe(423);
    expect(busy.body).toMatchObject({ code: 'LOCK_ACQUIRE_TIMEOUT' });
    expect(Number(busy.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // Another tenant is another semaphore (the key template).
    const other = request(server)
      .post('/exports/globex')
      .then((res) => res);
    await until(() => inside === 3, 'the other tenant inside');
    gate.open();
    const done = await Promise.all([...running, other]);
    expect(done.map((res) => res.status)).toEqual([201, 201, 201]);
    expect(done[0]!.body.permits).toBe(1);
    expect(done[1]!.body.token).not.toBe(done[0]!.body.token);
    expect((await request(server).post('/exports/acme')).status).toBe(201);
  });

  it("a provider: onBusy 'skip' when no permit is free; permitsPerCall takes several at once", async () => {
    const crawl = app.get(CrawlService);
    const first = crawl.crawl('eu');
    await until(() => inside === 1, 'the first crawl inside');
    expect(await crawl.crawl('eu')).toBeUndefined(); // skipped: its one permit is taken
    const renders = [crawl.render('r'), crawl.render('r')]; // 2 of 3 permits each: one at a time
    await until(() => inside === 2, 'one render inside');
    gate.open();
    expect(await first).toBe('crawled eu');
    expect(await Promise.all(renders)).toEqual([0, 0]);
    expect(mostInside).toBe(2); // the crawl and one render, never both renders
  });

  it('bad options fail when the class is defined', () => {
    expect(() => DistributedSemaphore({ name: 'x', size: 2, permitsPerCall: 3 })).toThrow(InvalidLockArgumentError);
    expect(() => DistributedSemaphore({ name: 'x', size: 0 })).toThrow(/@DistributedSemaphore size/);
    expect(() => DistributedSemaphore({ name: ['a', 'b'] as unknown as string, size: 2 })).toThrow(/one semaphore/);
    expect(() => DistributedSemaphore({ name: 'x', size: 2, kind: 'fair' } as never)).toThrow(/a semaphore has no lock kind/);
    expect(() => DistributedSemaphore({ name: 'x', size: 2, waitTme: '1s' } as never)).toThrow(/unknown option "waitTme"/);
  });
});
