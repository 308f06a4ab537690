/**
 * `npm run bench:sizing`: checks the sizing model of docs/operations/sizing.md against measured points.
 *
 * The model adds up Redis CPU per operation: acquire + release cycles x their cost, plus watchdog
 * renewals x theirs. Each point measures the two costs apart (cycles alone, at the point's number of
 * callers; held locks alone, renewed every second), then both at once, and compares the Redis CPU the
 * model predicts for the mixed load with the Redis CPU measured (INFO cpu, redis-server's own CPU time).
 *
 *   npm run bench:sizing                       # the default points
 *   npm run bench:sizing -- 10000:100 2000:10  # held:callers points
 */
import { LockClient, type LockHandle } from 'nestjs-distributed-lock';
import { RedisServer } from 'redis-topology';
import { machineInfo } from './machine.js';

const WINDOW_MS = 5000;

interface Point {
  held: number;
  callers: number;
}

async function redisCpuUs(server: RedisServer): Promise<number> {
  const info = await server.client().info('cpu');
  return (Number(/used_cpu_sys:([\d.]+)/.exec(info)![1]) + Number(/used_cpu_user:([\d.]+)/.exec(info)![1])) * 1e6;
}

/** Redis CPU (us per second of wall time) while `work` runs, and what `work` counted. */
async function measure(server: RedisServer, work: () => Promise<number>): Promise<{ redisUsPerSec: number; perSec: number }> {
  const cpu0 = await redisCpuUs(server);
  const t0 = performance.now();
  const count = await work();
  const elapsed = performance.now() - t0;
  return { redisUsPerSec: ((await redisCpuUs(server)) - cpu0) / (elapsed / 1000), perSec: count / (elapsed / 1000) };
}

async function checkPoint(server: RedisServer, { held, callers }: Point): Promise<Record<string, number>> {
  const connection = { mode: 'single' as const, host: server.host, port: server.port };
  const holder = await LockClient.connect({ connection, watchdogTimeout: '3s' }); // renewals every 1 s
  const worker = await LockClient.connect({ connection });
  let round = 0;
  const cycles = (ms: number) => async (): Promise<number> => {
    const until = performance.now() + ms;
    const prefix = `sz:${round++}`;
    let count = 0;
    await Promise.all(
      Array.from({ length: callers }, async (_, caller) => {
        for (let i = 0; performance.now() < until; i++) {
          const handle = await worker.lock(`${prefix}:${caller}:${i}`, 10_000);
          await handle.unlock();
          count++;
        }
      }),
    );
    return count;
  };
  try {
    await cycles(1000)(); // warm-up
    const alone = await measure(server, cycles(WINDOW_MS));
    const usPerCycle = alone.redisUsPerSec / alone.perSec;
    const handles: LockHandle[] = [];
    for (let i = 0; i < held; i += 500) {
      const batch = Array.from({ length: Math.min(500, held - i) }, (_, k) => holder.runInNewContext(() => holder.lock(`sz:held:${i + k}`)));
      handles.push(...(await Promise.all(batch)));
    }
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const renewing = await measure(server, async () => {
      await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
      return 0;
    });
    const usPerRenewal = renewing.redisUsPerSec / held;
    const both = await measure(server, cycles(WINDOW_MS));
    const predicted = both.perSec * usPerCycle + held * usPerRenewal;
    await Promise.all(handles.map((handle) => handle.unlock()));
    return {
      held,
      callers,
      cyclesAlonePerSec: Math.round(alone.perSec),
      redisUsPerCycle: +usPerCycle.toFixed(1),
      redisUsPerRenewal: +usPerRenewal.toFixed(2),
      mixedCyclesPerSec: Math.round(both.perSec),
      redisUsPerSecPredicted: Math.round(predicted),
      redisUsPerSecMeasured: Math.round(both.redisUsPerSec),
      measuredOverPredicted: +(both.redisUsPerSec / predicted).toFixed(2),
    };
  } finally {
    await holder.close();
    await worker.close();
  }
}

const points: Point[] = (process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['10000:100', '2000:10', '20000:50']).map((arg) => {
  const [held, callers] = arg.split(':').map(Number);
  if (!Number.isSafeInteger(held) || !Number.isSafeInteger(callers) || held! < 1 || callers! < 1)
    throw new Error(`a point is held:callers, e.g. 10000:100 (got "${arg}")`);
  return { held: held!, callers: callers! };
});
const server = await RedisServer.start();
try {
  const version = /redis_version:(\S+)/.exec(await server.client().info('server'))?.[1] ?? 'unknown';
  console.log(JSON.stringify(machineInfo(`Redis ${version}`)));
  for (const point of points) console.log(JSON.stringify(await checkPoint(server, point)));
} finally {
  await server.stop();
  server.cleanup();
}
