import { useRedis } from '../harness/use-redis.js';
import { stopAllWorkers, WorkerProcess } from '../harness/worker-process.js';

describe('holder paused (SIGSTOP) past its lease', () => {
  const redis = useRedis();
  afterEach(stopAllWorkers);

  it('another process takes over with a higher token; the resumed holder is told and cannot unlock', async () => {
    const worker = WorkerProcess.start('holder-worker.mjs', {
      DISTRIBUTED_LOCK_REDIS_MODE: 'single',
      DISTRIBUTED_LOCK_REDIS_HOST: '127.0.0.1',
      DISTRIBUTED_LOCK_REDIS_PORT: redis.server().port,
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

  it('a holder resumed after its lease sees the loss before its next write: isHeld and throwIfLost at once, the signal before later timers', async () => {
    const worker = WorkerProcess.start('paused-writer-worker.mjs', {
      DISTRIBUTED_LOCK_REDIS_MODE: 'single',
      DISTRIBUTED_LOCK_REDIS_HOST: '127.0.0.1',
      DISTRIBUTED_LOCK_REDIS_PORT: redis.server().port,
      LOCK_NAME: 'pause:b',
      LEASE: 3000, // long enough that a loaded host still stops the worker well inside its lease
    });
    const acquired = await worker.waitForType('acquired');
    worker.signal('SIGSTOP');
    const client = await redis.client();
    const handle = await client.lock('pause:b', { waitTime: '10s' }); // the paused holder's lease ran out in Redis
    expect(handle.token).toBeGreaterThan(acquired.token as number);
    worker.signal('SIGCONT');

    // A timer due before the lease deadline runs first after the pause: the signal may not have
    // fired yet, but the handle already answers from the deadline.
    const tick = await worker.waitForType('resumed-tick');
    expect(tick).toMatchObject({ isHeld: false, threw: 'LOCK_LOST' });
    // A timer due after the deadline runs after the deadline timer: the signal has fired.
    const late = await worker.waitForType('late-timer');
    expect(late).toMatchObject({ signalAborted: true, isHeld: false, threw: 'LOCK_LOST' });

    expect(handle.isHeld).toBe(true);
    await handle.unlock();
    worker.send('exit');
    expect((await worker.exited).code).toBe(0);
  });
});
