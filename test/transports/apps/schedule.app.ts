/** Scheduled jobs (@nestjs/schedule's @Interval), one process of the transport tests. */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Interval, ScheduleModule } from '@nestjs/schedule';
import { DistributedLock, LockService, ScheduledLock } from 'nestjs-distributed-lock';
import { Counter, LineLogger, lockModule, RUN, send, serve, startBadApp } from './common.js';

/** Which jobs do their work (a stopped job's ticks return at once), and how many runs are under way. */
const jobs = { locked: true, unlocked: true, running: 0, idle: [] as (() => void)[] };

@Injectable()
class Jobs {
  constructor(private readonly counter: Counter) {}

  /** One run per tick across the processes: the others skip it. Its work outlasts the period, so only the lock keeps runs apart. */
  @Interval(20)
  @ScheduledLock({ name: `${RUN}:job` })
  async locked(): Promise<void> {
    if (jobs.locked) await this.run('locked');
  }

  @Interval(20)
  async unlocked(): Promise<void> {
    if (jobs.unlocked) await this.run('unlocked');
  }

  private async run(job: 'locked' | 'unlocked'): Promise<void> {
    jobs.running += 1;
    try {
      send({ type: 'ran', job, value: await this.counter.increment(`job-${job}`, 25) });
    } finally {
      jobs.running -= 1;
      if (jobs.running === 0) jobs.idle.splice(0).forEach((resolve) => resolve());
    }
  }
}

@Module({ imports: [ScheduleModule.forRoot(), lockModule()], providers: [Jobs, Counter] })
class AppModule {}

/** A scheduled run has no request: `{params.id}` can never be filled. */
@Injectable()
class BadKeyJobs {
  @Interval(60_000)
  @DistributedLock('bad:{params.id}')
  bad(): void {}
}

@Module({ imports: [ScheduleModule.forRoot(), lockModule()], providers: [BadKeyJobs] })
class BadKeyModule {}

const create = (module: object) => NestFactory.createApplicationContext(module, { logger: new LineLogger(), abortOnError: false });

const app = await create(AppModule);
await app.init();
// Each failed attempt of the job's lock (Redis away), for the test to wait on: the log counts them only at the end of the outage.
app.get(LockService).events.on('failed', ({ name, outcome }) => {
  if (name === `${RUN}:job` && outcome === 'error') send({ type: 'tick-failed' });
});
await serve(
  app,
  {},
  {
    'bad-key': () => startBadApp(() => create(BadKeyModule)),
    'stop-jobs': async () => {
      jobs.locked = jobs.unlocked = false;
      if (jobs.running > 0) await new Promise<void>((resolve) => jobs.idle.push(resolve));
      return { type: 'jobs-stopped' };
    },
    'start-locked': async () => {
      jobs.locked = true;
      return { type: 'locked-started' };
    },
  },
);
