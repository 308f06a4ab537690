import 'reflect-metadata';
import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { Cron, Interval, ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { DistributedLockModule, ScheduledLock } from 'nestjs-distributed-lock';
import { useRedis } from '../harness/use-redis.js';
import { until } from '../harness/wait.js';

/** Runs of each job: [job, app, tick second]. */
const runs: [string, string, number][] = [];

@Injectable()
class RestockJobs {
  app = '';

  // @Cron above the lock: it writes its metadata on our wrapper.
  @Cron('* * * * * *', { name: 'restock' })
  @ScheduledLock({ lockAtLeastFor: '500ms' })
  async restock(): Promise<void> {
    runs.push(['restock', this.app, Math.floor(Date.now() / 1000)]);
  }

  // @Cron below the lock: its metadata is copied onto the wrapper.
  @ScheduledLock({ lockAtLeastFor: '500ms' })
  @Cron('* * * * * *', { name: 'restock-below' })
  async restockBelow(): Promise<void> {
    runs.push(['restock-below', this.app, Math.floor(Date.now() / 1000)]);
  }

  @Interval('sweep', 60_000)
  @ScheduledLock()
  async sweep(): Promise<void> {}
}

/**
 * @nestjs/schedule 12 refuses, at start-up, a second job with a name it already has. A named @Cron
 * with @ScheduledLock above or below it must register once, under its name, and run under the lock.
 */
describe('@ScheduledLock on a named @Cron', () => {
  const redis = useRedis();
  const apps: INestApplication[] = [];

  async function startApp(name: string): Promise<INestApplication> {
    @Module({
      imports: [ScheduleModule.forRoot(), DistributedLockModule.forRoot({ connection: { mode: 'single', host: '127.0.0.1', port: redis.server().port } })],
      providers: [RestockJobs],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    apps.push(app);
    await app.init(); // would throw "Cron Job with the given name (restock) already exists"
    app.get(RestockJobs).app = name;
    return app;
  }

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
  });

  it('registers each job once under its name, in every app; each tick runs in one app only', async () => {
    const [a, b] = [await startApp('a'), await startApp('b')];
    for (const app of [a, b]) {
      const registry = app.get(SchedulerRegistry);
      expect([...registry.getCronJobs().keys()].sort()).toEqual(['restock', 'restock-below']);
      expect(registry.getIntervals()).toEqual(['sweep']);
    }
    await until(
      () => runs.filter(([job]) => job === 'restock').length >= 2 && runs.filter(([job]) => job === 'restock-below').length >= 2,
      'two ticks of each job',
      10_000,
    );
    for (const job of ['restock', 'restock-below']) {
      const ticks = runs.filter(([name]) => name === job).map(([, , second]) => second);
      expect(new Set(ticks).size).toBe(ticks.length); // one app per tick
    }
  });
});
