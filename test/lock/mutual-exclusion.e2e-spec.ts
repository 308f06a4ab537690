import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { useRedis } from '../harness/use-redis.js';
import { stopAllWorkers, WorkerProcess } from '../harness/worker-process.js';

const PROCESSES = 3;
const CONTEXTS = 4;
const ITERATIONS = 20;
const TOTAL = PROCESSES * CONTEXTS * ITERATIONS;

describe('mutual exclusion: read-sleep-write on a Redis counter', () => {
  const redis = useRedis();
  let admin: Redis;

  beforeAll(() => {
    admin = redis.server().client();
  });
  afterEach(stopAllWorkers);

  async function runProcesses(protect: 'lock' | 'none', counterKey: string): Promise<number> {
    const workers = Array.from({ length: PROCESSES }, () =>
      WorkerProcess.start('counter-worker.mjs', { REDIS_PORT: redis.server().port }, [protect, CONTEXTS, ITERATIONS, counterKey, `${counterKey}:lock`]),
    );
    await Promise.all(workers.map((worker) => worker.waitForType('ready')));
    for (const worker of workers) worker.send('go');
    await Promise.all(workers.map((worker) => worker.waitForType('done', 60_000)));
    const exits = await Promise.all(workers.map((worker) => worker.exited));
    expect(exits.map((exit) => exit.code)).toEqual(workers.map(() => 0));
    return Number(await admin.get(counterKey));
  }

  it(`control: ${PROCESSES} processes x ${CONTEXTS} contexts without the lock lose updates`, async () => {
    const value = await runProcesses('none', 'counter:control');
    expect(value).toBeLessThan(TOTAL);
  });

  it(`${PROCESSES} processes x ${CONTEXTS} contexts under the lock lose no update`, async () => {
    const value = await runProcesses('lock', 'counter:locked');
    expect(value).toBe(TOTAL);
    expect(await admin.exists('lock:{counter:locked:lock}')).toBe(0);
  });

  describe('concurrent workers in one process, outside any lock context', () => {
    const WORKERS = 12;
    const ROUNDS = 10;

    async function runInProcess(useLock: boolean, counterKey: string): Promise<number> {
      const client = await redis.client();
      const section = async (): Promise<void> => {
        const value = Number((await admin.get(counterKey)) ?? 0);
        await sleep(1);
        await admin.set(counterKey, value + 1);
      };
      await Promise.all(
        Array.from({ length: WORKERS }, async () => {
          for (let round = 0; round < ROUNDS; round++) {
            if (!useLock) {
              await section();
              continue;
            }
            // Each acquisition outside a context is its own owner: the workers must exclude each other.
            const handle = await client.lock('in-process');
            try {
              await section();
            } finally {
              await handle.unlock();
            }
          }
        }),
      );
      return Number(await admin.get(counterKey));
    }

    it('control: without the lock they lose updates', async () => {
      expect(await runInProcess(false, 'counter:in-process-control')).toBeLessThan(WORKERS * ROUNDS);
    });

    it('with lock() they exclude each other exactly as separate processes do', async () => {
      expect(await runInProcess(true, 'counter:in-process')).toBe(WORKERS * ROUNDS);
    });
  });
});
