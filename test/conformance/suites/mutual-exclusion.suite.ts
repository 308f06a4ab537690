import { setTimeout as sleep } from 'node:timers/promises';
import { stopAllWorkers, WorkerProcess } from '../../harness/worker-process.js';
import { itWorkersOnly, type ModeFixture } from '../fixture.js';

const PROCESSES = 3;
const CONTEXTS = 4;
const ITERATIONS = 15;
const TOTAL = PROCESSES * CONTEXTS * ITERATIONS;

export function mutualExclusionSuite(fx: ModeFixture): void {
  describe('mutual exclusion: read-sleep-write on a Redis counter', () => {
    afterEach(stopAllWorkers);

    async function runProcesses(protect: 'lock' | 'none', counterKey: string): Promise<number> {
      const workers = Array.from({ length: PROCESSES }, () =>
        WorkerProcess.start('counter-worker.mjs', fx.env(), [protect, CONTEXTS, ITERATIONS, counterKey, `${counterKey}:lock`]),
      );
      await Promise.all(workers.map((worker) => worker.waitForType('ready')));
      for (const worker of workers) worker.send('go');
      await Promise.all(workers.map((worker) => worker.waitForType('done', 60_000)));
      const exits = await Promise.all(workers.map((worker) => worker.exited));
      expect(exits.map((exit) => exit.code)).toEqual(workers.map(() => 0));
      const reader = await fx.client();
      return Number(await fx.data(reader).get(counterKey));
    }

    itWorkersOnly(fx)(`control: ${PROCESSES} processes x ${CONTEXTS} contexts without the lock lose updates`, async () => {
      expect(await runProcesses('none', 'counter:control')).toBeLessThan(TOTAL);
    });

    itWorkersOnly(fx)(`${PROCESSES} processes x ${CONTEXTS} contexts under the lock lose no update`, async () => {
      expect(await runProcesses('lock', 'counter:locked')).toBe(TOTAL);
      expect(await fx.keyExistsAnywhere('lock:{counter:locked:lock}')).toBe(false);
    });

    describe('concurrent workers in one process, outside any lock context', () => {
      const WORKERS = 10;
      const ROUNDS = 8;

      async function runInProcess(useLock: boolean, counterKey: string): Promise<number> {
        const client = await fx.client();
        const redis = fx.data(client);
        const section = async (): Promise<void> => {
          const value = Number((await redis.get(counterKey)) ?? 0);
          await sleep(1);
          await redis.set(counterKey, value + 1);
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
        return Number(await redis.get(counterKey));
      }

      it('control: without the lock they lose updates', async () => {
        expect(await runInProcess(false, 'counter:in-process-control')).toBeLessThan(WORKERS * ROUNDS);
      });

      it('with lock() they exclude each other exactly as separate processes do', async () => {
        expect(await runInProcess(true, 'counter:in-process')).toBe(WORKERS * ROUNDS);
      });
    });
  });
}
