import { useRedis } from '../harness/use-redis.js';
import { stopAllWorkers, WorkerProcess } from '../harness/worker-process.js';

describe('holder paused (SIGSTOP) past its lease', () => {
  const redis = useRedis();
  afterEach(stopAllWorkers);

  it('another process takes over with a higher token; the resumed holder is told and cannot unlock', async () => {
    const worker = WorkerProcess.start('holder-worker.mjs', {
      REDIS_MODE: 'single', REDIS_HOST: '127.0.0.1', REDIS_PORT: redis.server().port,
      LOCK_NAME: 'pause:a',
      LEASE: 'watchdog',
      WATCHDOG: 300,
    });
    const acquired = await worker.waitForType('acquired');
    await worker.waitForType('renewed');
    worker.signal('SIGSTOP');

    const client = await redis.client();
    const handle = await client.lock('pause:a', { waitTime: '10s' });
    expect(handle.token).toBeGreaterThan(acquired.token as number);

    worker.signal('SIGCONT');
    const aborted = await worker.waitForType('aborted');
    expect(['lease-expired', 'not-owner']).toContain(aborted.reason);
    worker.send('unlock');
    const unlock = await worker.waitFor((m) => m.type === 'unlocked' || m.type === 'unlock-failed', 'unlock result');
    expect(unlock).toEqual({ type: 'unlock-failed', code: 'LOCK_NOT_HELD' });

    // The new holder is untouched by all of it.
    expect(handle.isHeld).toBe(true);
    expect(await client.isLocked('pause:a')).toBe(true);
    await handle.unlock();
    worker.send('exit');
    expect((await worker.exited).code).toBe(0);
  });
});
