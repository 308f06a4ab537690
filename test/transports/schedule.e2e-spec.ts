import { randomUUID } from 'node:crypto';
import type { LockClient } from 'nestjs-distributed-lock';
import { FaultProxy, stopAllFaultProxies } from 'redis-topology';
import { useRedis } from '../harness/use-redis.js';
import { stopAllWorkers, type WorkerProcess } from '../harness/worker-process.js';
import { closeApp, logged, startApp } from './transport-apps.js';
import type { Redis } from 'ioredis';

/**
 * @nestjs/schedule: two processes of an app with an @Interval job under @ScheduledLock (read, pause
 * longer than the period, write) and the same job unlocked, on one redis-server through a fault proxy.
 * A scheduled job has no client: what the service logs is its whole answer.
 */
describe('@nestjs/schedule (@Interval + @ScheduledLock): two app processes, one Redis', () => {
  const redis = useRedis();
  const run = randomUUID().slice(0, 8);
  let apps: WorkerProcess[];
  let proxy: FaultProxy;
  let other: LockClient;
  const runs = (job: string): number => apps.reduce((sum, app) => sum + app.messages.filter((m) => m.type === 'ran' && m.job === job).length, 0);
  const skips = (app: WorkerProcess): number => logged(app, 'debug', new RegExp(`skipped: lock "${run}:job" is held elsewhere`)).length;

  beforeAll(async () => {
    proxy = await FaultProxy.start({ targetPort: redis.server().port });
    const env = { DISTRIBUTED_LOCK_REDIS_PORT: proxy.port, RUN_ID: run };
    apps = (await Promise.all([startApp('schedule', env), startApp('schedule', env)])).map(({ process }) => process);
  }, 60_000);
  beforeEach(async () => {
    other = await redis.client();
  });
  afterAll(async () => {
    await stopAllWorkers();
    await stopAllFaultProxies();
  });

  it('mutual exclusion: the locked job loses no update; the unlocked control, run by the same ticks, loses updates', async () => {
    await apps[0]!.waitFor(() => runs('locked') >= 10 && runs('unlocked') >= 10, 'ten runs of each job', 20_000);
    apps.forEach((app) => app.send('stop-jobs'));
    await Promise.all(apps.map((app) => app.waitForType('jobs-stopped')));
    expect(Number(await (other.redis as Redis).get(`${run}:counter:job-locked`))).toBe(runs('locked'));
    expect(Number(await (other.redis as Redis).get(`${run}:counter:job-unlocked`))).toBeLessThan(runs('unlocked'));
    // Both processes contended for the lock: each ran the job or found it held.
    expect(apps.map((app) => app.messages.some((m) => m.type === 'ran' && m.job === 'locked') || skips(app) > 0)).toEqual([true, true]);
  });

  it('busy: while the lock is held elsewhere every tick is skipped, logged at debug level', async () => {
    apps.forEach((app) => app.send('start-locked'));
    await Promise.all(apps.map((app) => app.waitForType('locked-started')));
    const holder = await other.lock(`${run}:job`, { leaseTime: '20s', waitTime: '5s' });
    // A process's skip line comes after every run it reported before it (one stdout, in order).
    const seen = await Promise.all(apps.map(async (app) => (await app.waitFor(() => skips(app) > 0, 'a skipped tick'), skips(app))));
    const before = runs('locked');
    await Promise.all(apps.map((app, i) => app.waitFor(() => skips(app) >= seen[i]! + 3, 'three more skipped ticks')));
    expect(runs('locked')).toBe(before);
    await holder.unlock();
    await apps[0]!.waitFor(() => runs('locked') > before, 'a run once the lock is free');
    expect(apps.flatMap((app) => logged(app, 'warn', /./))).toEqual([]);
  });

  it('Redis unreachable: ticks are skipped, the outage is logged once when it starts and once, with the count, when it ends', async () => {
    proxy.blackhole();
    await Promise.all(
      apps.map((app) =>
        app.waitFor((m) => m.type === 'log' && m.level === 'warn' && /^Redis lock operations are failing/.test(String(m.message)), 'the outage warning'),
      ),
    );
    // Several ticks of each process find Redis away before it comes back.
    await Promise.all(apps.map((app) => app.waitFor(() => app.messages.filter((m) => m.type === 'tick-failed').length >= 3, 'three failed ticks')));
    proxy.heal();
    for (const app of apps) {
      const end = await app.waitFor((m) => m.type === 'log' && /answers lock operations again/.test(String(m.message)), 'the end of the outage');
      // Several ticks skipped, one warning before the end of the outage (replies the black-hole held
      // arrive late after it, and may start another run of failures: not this outage's).
      expect(Number(/(\d+) x Jobs\.locked skipped/.exec(String(end.message))?.[1])).toBeGreaterThanOrEqual(3);
      const during = app.messages.slice(0, app.messages.indexOf(end));
      expect(during.filter((m) => m.type === 'log' && m.level === 'warn' && /^Redis lock operations are failing/.test(String(m.message)))).toHaveLength(1);
    }
  });

  it('start-up: a job whose key reads a request (which a scheduled run never has) fails app.init, naming it', async () => {
    apps[0]!.send('bad-key');
    const refused = await apps[0]!.waitFor((m) => m.type.startsWith('bad-key-'), 'the bad app to start or be refused');
    expect(refused).toMatchObject({ type: 'bad-key-refused', code: 'LOCK_INVALID_CONFIG' });
    expect(refused.message).toMatch(/BadKeyJobs\.bad: template "bad:\{params\.id\}" reads a request, but a scheduled job has no request/);
  });

  it('app.close(): each process closes and exits by itself while its jobs tick; nothing was logged as an error; no lock is left', async () => {
    for (const app of apps) {
      const { code } = await closeApp(app);
      expect(code).toBe(0);
      expect(logged(app, 'error', /./)).toEqual([]);
    }
    expect((await (other.redis as Redis).keys(`*${run}*`)).filter((key) => !key.startsWith(`${run}:counter:`) && !key.endsWith(':fence'))).toEqual([]);
  });
});
