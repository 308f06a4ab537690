import 'reflect-metadata';
import { Controller, Injectable, Logger, Param, Post, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { CurrentLock, DistributedLock, DistributedLockModule, LockService, type LockHandle, type LockLostInfo } from 'nestjs-distributed-lock';
import { useRedis } from '../harness/use-redis.js';
import { until } from '../harness/wait.js';

/** The handlers' gates: each call waits until the test lets it finish, then reports what it saw. */
const finished: { route: string; aborted: boolean; reason: unknown }[] = [];
const gates: (() => void)[] = [];
const lostCalls: LockLostInfo[] = [];
const gate = (): Promise<void> => new Promise((resolve) => gates.push(resolve));

@Injectable()
class Jobs {
  constructor(private readonly locks: LockService) {}

  @DistributedLock({ nameFromArgs: (id: string) => `job:${id}`, leaseTime: '80ms', onLost: (info) => void lostCalls.push(info) })
  async run(id: string): Promise<string> {
    const lock = this.locks.currentLock()!;
    await gate();
    return `${id} done, lost: ${lock.signal.aborted}`;
  }
}

@Controller()
class OrdersController {
  @Post('request/:id')
  @DistributedLock({ name: 'order:{params.id}', leaseTime: '80ms', onLost: 'abort-request' })
  async abortRequest(@Param('id') id: string, @CurrentLock() lock: LockHandle): Promise<{ id: string }> {
    await gate();
    finished.push({ route: 'abort-request', aborted: lock.signal.aborted, reason: (lock.signal.reason as { reason?: string })?.reason });
    return { id };
  }

  @Post('signal/:id')
  @DistributedLock({ name: 'order:{params.id}', leaseTime: '80ms' })
  async signalOnly(@Param('id') id: string, @CurrentLock() lock: LockHandle): Promise<{ id: string; aborted: boolean }> {
    await gate();
    finished.push({ route: 'abort', aborted: lock.signal.aborted, reason: (lock.signal.reason as { reason?: string })?.reason });
    return { id, aborted: lock.signal.aborted };
  }
}

describe('@DistributedLock onLost: what happens when the lease is lost while the handler runs', () => {
  const redis = useRedis();
  let app: INestApplication;
  const errors: string[] = [];

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ connection: { mode: 'single', host: '127.0.0.1', port: redis.server().port } })],
      controllers: [OrdersController],
      providers: [Jobs],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    // Nest reports "Cannot set headers after they are sent" and the like as errors: there must be none.
    Logger.overrideLogger({
      log: () => undefined,
      warn: () => undefined,
      error: (message: unknown) => void errors.push(String(message)),
      debug: () => undefined,
      verbose: () => undefined,
    });
    await app.init();
  });
  afterAll(async () => {
    gates.splice(0).forEach((open) => open());
    await app?.close();
  });

  it("'abort-request' answers 503 LOCK_LOST as soon as the lease is lost; the handler runs on, its result dropped", async () => {
    const started = performance.now();
    const response = await request(app.getHttpServer()).post('/request/1');
    expect(response.status).toBe(503);
    expect(response.body).toMatchObject({ code: 'LOCK_LOST', reason: 'lease-expired' });
    expect(response.headers['retry-after']).toBe('1');
    expect(performance.now() - started).toBeLessThan(2000); // the handler is still waiting at its gate
    expect(gates).toHaveLength(1);
    gates.shift()!();
    await until(() => finished.length === 1, 'the handler to finish');
    expect(finished[0]).toEqual({ route: 'abort-request', aborted: true, reason: 'lease-expired' });
    await new Promise((resolve) => setTimeout(resolve, 50)); // let Nest try to send the dropped result, if it would
    expect(errors).toEqual([]);
  });

  it("the default ('abort'): the handler's signal aborts, and the handler decides what to answer", async () => {
    const pending = request(app.getHttpServer())
      .post('/signal/2')
      .then((r) => r);
    await until(() => gates.length === 1, 'the handler to start');
    await new Promise((resolve) => setTimeout(resolve, 150)); // past the 80 ms lease
    gates.shift()!();
    const response = await pending;
    expect(response.status).toBe(201);
    expect(response.body).toEqual({ id: '2', aborted: true });
  });

  it('a function is called once with the name, the reason, the handle and the arguments (provider methods too)', async () => {
    const jobs = app.get(Jobs);
    const result = jobs.run('7');
    await until(() => lostCalls.length === 1, 'onLost to be called', 2000);
    const [info] = lostCalls;
    expect(info).toMatchObject({ name: 'job:7', error: { code: 'LOCK_LOST', reason: 'lease-expired' }, args: ['7'], context: undefined });
    expect(info!.lock.token).toEqual(expect.any(Number));
    gates.shift()!();
    expect(await result).toBe('7 done, lost: true');
    expect(lostCalls).toHaveLength(1);
    expect(app.get(LockService).stats().held).toBe(0);
  });

  it('rejects an onLost that is not abort, abort-request or a function, naming the option', () => {
    expect(() => DistributedLock({ name: 'x', onLost: 'retry' as never })).toThrow(
      /Invalid @DistributedLock onLost: expected 'abort', 'abort-request' or a function/,
    );
  });
});
