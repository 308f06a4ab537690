import 'reflect-metadata';
import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DistributedLockModule, InvalidLockArgumentError, Leader, type Leadership } from 'nestjs-distributed-lock';
import { useRedis } from '../harness/use-redis.js';
import { until } from '../harness/wait.js';

type Record = { app: string; what: 'started' | 'stopped'; term: number; at: number };
const records: Record[] = [];
const APP_ID = Symbol('APP_ID');

@Injectable()
class ReportWorker {
  constructor(@Inject(APP_ID) private readonly app: string) {}

  /** Leads while it runs; stops when its signal aborts (the term ended). */
  @Leader('nest:report-worker')
  async run(leadership: Leadership): Promise<void> {
    records.push({ app: this.app, what: 'started', term: leadership.term, at: performance.now() });
    while (!leadership.signal.aborted) await sleep(5, undefined, { signal: leadership.signal }).catch(() => undefined);
    await sleep(20); // winding down: the next leader must not start before this ends
    records.push({ app: this.app, what: 'stopped', term: leadership.term, at: performance.now() });
  }

  /** Default election name: ReportWorker.once; returns at once, so the instance steps down and stands again. */
  @Leader({ standAgainAfter: '10ms' })
  async once(leadership: Leadership): Promise<void> {
    records.push({ app: this.app, what: 'started', term: -leadership.term, at: performance.now() });
  }
}

function appModule(id: string, port: number): object {
  class AppModule {}
  Module({
    imports: [DistributedLockModule.forRoot({ connection: { mode: 'single', host: '127.0.0.1', port } })],
    providers: [ReportWorker, { provide: APP_ID, useValue: id }],
  })(AppModule);
  return AppModule;
}

describe('@Leader on a provider method: one instance runs it, and hands it over on app.close()', () => {
  const redis = useRedis();
  const apps = new Map<string, INestApplicationContext>();
  afterAll(async () => {
    await Promise.all([...apps.values()].map((app) => app.close()));
  });

  it('exactly one instance runs the worker; closing it hands the leadership to the other at once, after its worker stopped', async () => {
    for (const id of ['a', 'b']) apps.set(id, await NestFactory.createApplicationContext(appModule(id, redis.server().port), { logger: false }));
    const workerRecords = () => records.filter((record) => record.term > 0);
    await until(() => workerRecords().length === 1, 'one worker to start');
    const [first] = workerRecords();
    const leaderApp = apps.get(first!.app)!;
    apps.delete(first!.app);
    const closedAt = performance.now();
    await leaderApp.close();
    await until(() => workerRecords().length === 3, 'the other instance to take over');
    const [, stopped, second] = workerRecords();
    expect(stopped).toMatchObject({ app: first!.app, what: 'stopped', term: first!.term });
    expect(second).toMatchObject({ what: 'started' });
    expect(second!.app).not.toBe(first!.app);
    expect(second!.term).toBeGreaterThan(first!.term);
    expect(second!.at).toBeGreaterThanOrEqual(stopped!.at); // no overlap: handed over once the worker stopped
    expect(second!.at - closedAt).toBeLessThan(1000); // at once: the lease is the 30 s watchdog timeout
  });

  it('a method that returns steps down and stands again (default name Class.method)', async () => {
    await until(() => records.filter((record) => record.term < 0).length >= 3, 'the short method to run three times');
    const terms = records.filter((record) => record.term < 0).map((record) => -record.term);
    expect([...terms].sort((x, y) => x - y)).toEqual(terms);
  });

  it('bad options fail when the class is defined', () => {
    expect(() => Leader('')).toThrow(InvalidLockArgumentError);
    expect(() => Leader({ name: 'x', every: 1 } as never)).toThrow(/unknown option "every"/);
  });
});
