import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { Controller, Injectable, Module, Post, type INestApplication, type LoggerService } from '@nestjs/common';
import { Interval, ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { DistributedLock, DistributedLockModule, LockService, ScheduledLock } from 'nestjs-distributed-lock';
import { FaultProxy, stopAllFaultProxies } from 'redis-topology';
import { useRedis } from '../harness/use-redis.js';
import { until } from '../harness/wait.js';

/**
 * Reliability, "outages and abandoned work": a call's answer is bounded whatever Redis does (its
 * waitTime plus at most one operation timeout), app.close() ends within a stated bound Redis up or
 * down, and an outage is logged once when it starts and once when it ends, not once per failure.
 * Redis here is a healthy server behind a fault proxy that black-holes the link (nothing delivered,
 * nothing refused: the hardest case, every call must be given up by its own timer) or refuses it.
 */

const WAIT_MS = 400;
const OPERATION_TIMEOUT_MS = 1000;
const SHUTDOWN_TIMEOUT_MS = 300;
/** Timer lateness allowed on a loaded 2-core machine on top of a bound. */
const SLACK_MS = 400;

/** Log lines by level, from the app's logger. */
class CapturedLogs implements LoggerService {
  readonly lines: { level: string; message: string }[] = [];
  log(message: unknown): void {
    this.lines.push({ level: 'log', message: String(message) });
  }
  error(message: unknown): void {
    this.lines.push({ level: 'error', message: String(message) });
  }
  warn(message: unknown): void {
    this.lines.push({ level: 'warn', message: String(message) });
  }
  debug(): void {}
  verbose(): void {}
  matching(level: string, pattern: RegExp): string[] {
    return this.lines.filter((line) => line.level === level && pattern.test(line.message)).map((line) => line.message);
  }
}

@Controller()
class BusyController {
  @Post('plain')
  @DistributedLock({ name: 'outage:plain', waitTime: WAIT_MS })
  plain(): string {
    return 'ran';
  }

  @Post('fair')
  @DistributedLock({ name: 'outage:fair', kind: 'fair', waitTime: WAIT_MS })
  fair(): string {
    return 'ran';
  }

  @Post('multi')
  @DistributedLock({ name: ['outage:m1', 'outage:m2'], waitTime: WAIT_MS })
  multi(): string {
    return 'ran';
  }

  /** Its lock is kept 20 s after the call (lockAtLeastFor): shutdown releases it. */
  @Post('kept')
  @DistributedLock({ name: 'outage:kept', leaseTime: '30s', lockAtLeastFor: '20s' })
  kept(): string {
    return 'ran';
  }
}

/** Runs of the jobs, by name. */
const runs = { scheduled: 0, plain: 0 };

@Injectable()
class Jobs {
  @Interval(50)
  @ScheduledLock({ name: 'outage:job' })
  scheduled(): void {
    runs.scheduled += 1;
  }
}

@Injectable()
class PlainJobs {
  @Interval(50)
  @DistributedLock({ name: 'outage:plain-job', waitTime: 0 })
  plain(): void {
    runs.plain += 1;
  }
}

describe('outages: answers by waitTime + one operation timeout, close within its bound, one log line each way', () => {
  const redis = useRedis();
  afterEach(stopAllFaultProxies);

  async function boot(proxy: FaultProxy, logs: CapturedLogs, parts: { controllers?: (new () => unknown)[]; providers?: (new () => unknown)[] }) {
    @Module({
      imports: [
        ScheduleModule.forRoot(),
        DistributedLockModule.forRoot({
          connection: { mode: 'single', host: proxy.host, port: proxy.port },
          operationTimeout: OPERATION_TIMEOUT_MS,
          watchdogTimeout: 3000,
          shutdownTimeout: SHUTDOWN_TIMEOUT_MS,
        }),
      ],
      controllers: parts.controllers ?? [],
      providers: parts.providers ?? [],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    const app = moduleRef.createNestApplication({ logger: logs });
    await app.listen(0, '127.0.0.1');
    return app;
  }

  async function post(app: INestApplication, path: string): Promise<{ status: number; ms: number }> {
    const { port } = app.getHttpServer().address() as AddressInfo;
    const started = performance.now();
    const response = await fetch(`http://127.0.0.1:${port}/${path}`, { method: 'POST' });
    await response.text();
    return { status: response.status, ms: performance.now() - started };
  }

  it('decorated calls (plain, fair, multi-key) answer 503 within waitTime + one operation timeout while the link is black-holed', async () => {
    const proxy = await FaultProxy.start({ targetPort: redis.server().port });
    const logs = new CapturedLogs();
    const app = await boot(proxy, logs, { controllers: [BusyController] });
    try {
      expect((await post(app, 'plain')).status).toBe(201); // healthy first
      proxy.blackhole();
      const answers = await Promise.all([post(app, 'plain'), post(app, 'fair'), post(app, 'multi'), post(app, 'plain')]);
      for (const answer of answers) {
        expect(answer.status).toBe(503);
        expect(answer.ms).toBeLessThan(WAIT_MS + OPERATION_TIMEOUT_MS + SLACK_MS);
      }
    } finally {
      proxy.heal();
      await app.close();
    }
  });

  it('control: a Redis command through the black-holed link gets no answer within that bound', async () => {
    const proxy = await FaultProxy.start({ targetPort: redis.server().port });
    const raw = new Redis({ host: proxy.host, port: proxy.port, maxRetriesPerRequest: 0 });
    try {
      await raw.ping();
      proxy.blackhole();
      const outcome = await Promise.race([
        raw.ping().then(() => 'answered'),
        new Promise((resolve) => setTimeout(resolve, WAIT_MS + OPERATION_TIMEOUT_MS + SLACK_MS, 'no answer').unref()),
      ]);
      expect(outcome).toBe('no answer');
    } finally {
      raw.disconnect();
      proxy.heal();
    }
  });

  it('app.close() after an outage ends within shutdownTimeout + the operation timeout (+1 s for the connections), and says once what it gave up', async () => {
    const proxy = await FaultProxy.start({ targetPort: redis.server().port });
    const logs = new CapturedLogs();
    const app = await boot(proxy, logs, { controllers: [BusyController] });
    const locks = app.get(LockService);
    const held = await locks.lock('outage:held', '30s');
    const released = await locks.lock('outage:released', '30s');
    expect((await post(app, 'kept')).status).toBe(201);
    proxy.blackhole();
    // Work Redis will not answer: a release retried in the background, a waiter's clean-up.
    await expect(released.unlock()).rejects.toMatchObject({ code: 'LOCK_BACKEND_ERROR' });
    await expect(locks.tryLock('outage:waiter', WAIT_MS)).rejects.toMatchObject({ code: 'LOCK_BACKEND_ERROR' });
    expect(held.isHeld).toBe(true);
    const started = performance.now();
    await app.close();
    expect(performance.now() - started).toBeLessThan(SHUTDOWN_TIMEOUT_MS + OPERATION_TIMEOUT_MS + 1000 + SLACK_MS);
    expect(logs.matching('warn', /^close\(\) gave up on work Redis did not answer/)).toHaveLength(1);
    proxy.heal();
  });

  it('a @ScheduledLock job skips its runs while Redis is away, logs the outage once, and once more with the count when Redis is back', async () => {
    const proxy = await FaultProxy.start({ targetPort: redis.server().port });
    const logs = new CapturedLogs();
    const app = await boot(proxy, logs, { providers: [Jobs] });
    try {
      await until(() => runs.scheduled > 0, 'a first run');
      let failedTicks = 0;
      app.get(LockService).events.on('failed', ({ name, outcome }) => {
        if (name === 'outage:job' && outcome === 'error') failedTicks += 1;
      });
      proxy.refuse();
      proxy.reset();
      const before = runs.scheduled;
      await until(() => failedTicks >= 3, 'three ticks that found Redis away', 15_000);
      const during = runs.scheduled;
      await proxy.accept();
      await until(() => logs.matching('log', /answers lock operations again/).length > 0, 'the end of the outage to be logged', 15_000);
      await until(() => runs.scheduled > during, 'a run after the outage');
      expect(during - before).toBeLessThanOrEqual(1); // no run while Redis was away (one may have been under way)
      expect(logs.matching('warn', /Redis lock operations are failing/)).toHaveLength(1);
      expect(logs.matching('error', /./)).toEqual([]); // nothing reached the scheduler's error log
      const [end] = logs.matching('log', /answers lock operations again/);
      expect(end).toMatch(/(\d+) x Jobs\.scheduled skipped/);
      expect(Number(/(\d+) x Jobs\.scheduled skipped/.exec(end!)![1])).toBeGreaterThanOrEqual(3);
    } finally {
      await app.close();
    }
  });

  it('control: a plain @DistributedLock job rejects on every tick while Redis is away, and the scheduler logs each one', async () => {
    const proxy = await FaultProxy.start({ targetPort: redis.server().port });
    const logs = new CapturedLogs();
    const app = await boot(proxy, logs, { providers: [PlainJobs] });
    try {
      await until(() => runs.plain > 0, 'a first run');
      proxy.refuse();
      proxy.reset();
      await until(() => logs.matching('error', /LOCK_BACKEND_ERROR|Redis/).length >= 3, 'an error logged per tick', 15_000);
    } finally {
      await proxy.accept();
      await app.close();
    }
  });
});
