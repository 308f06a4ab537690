import { useRedis } from '../harness/use-redis.js';
import { startApp, stopApp, type InventoryApp } from '../harness/inventory-app.js';
import { until } from '../harness/wait.js';

const INSTANCES = 3;
const PRODUCT = 'restock-e2e';

type Run = { tick: number; instance: string };
function perTick(runs: Run[]): Map<number, string[]> {
  const ticks = new Map<number, string[]>();
  for (const run of runs) ticks.set(run.tick, [...(ticks.get(run.tick) ?? []), run.instance]);
  return ticks;
}

describe('a @Cron job with @ScheduledLock in a horizontally scaled app (3 processes)', () => {
  const redis = useRedis();
  const apps: InventoryApp[] = [];

  afterAll(async () => {
    await Promise.all(apps.map(stopApp));
  });

  it('runs once per tick across the instances; the same job without the lock runs in every instance', async () => {
    const admin = redis.server().client();
    const env = {
      DISTRIBUTED_LOCK_REDIS_MODE: 'single',
      DISTRIBUTED_LOCK_REDIS_HOST: '127.0.0.1',
      DISTRIBUTED_LOCK_REDIS_PORT: String(redis.server().port),
      INVENTORY_RESTOCK_CRON: '* * * * * *',
      INVENTORY_RESTOCK_CONTROL: 'true',
      INVENTORY_RESTOCK_PRODUCT: PRODUCT,
      INVENTORY_RESTOCK_AT_LEAST: '500ms',
    };
    await admin.set(`inventory:{product:${PRODUCT}}:stock`, 0);
    for (let i = 1; i <= INSTANCES; i++) apps.push(await startApp(`app-${i}`, env));

    // Every instance ticks: wait for 5 ticks in which the unlocked control ran in all of them.
    const read = async (key: string): Promise<Run[]> => (await admin.lrange(key, 0, -1)).map((line) => JSON.parse(line) as Run);
    await until(
      async () => [...perTick(await read('inventory:restock:unlocked-runs')).values()].filter((ids) => new Set(ids).size === INSTANCES).length >= 6,
      'six ticks seen by every instance',
      30_000,
    );
    const control = perTick(await read('inventory:restock:unlocked-runs'));
    const locked = perTick(await read('inventory:restock:runs'));
    await Promise.all(apps.map(stopApp));
    const lockedRuns = (await read('inventory:restock:runs')).length;
    const stock = Number(await admin.get(`inventory:{product:${PRODUCT}}:stock`));
    await admin.quit();

    // The control: without the lock, every instance runs every tick.
    const fullTicks = [...control.entries()].filter(([, ids]) => new Set(ids).size === INSTANCES).map(([tick]) => tick);
    expect(fullTicks.length).toBeGreaterThanOrEqual(6);
    // With the lock: never more than one run per tick, and one run in each tick every instance saw
    // (the last such tick may still be running when the lists were read).
    const overlaps = [...locked.entries()].filter(([, ids]) => ids.length > 1);
    expect(overlaps).toEqual([]);
    const settled = fullTicks.sort((a, b) => a - b).slice(0, -1);
    expect(settled.map((tick) => [tick, locked.get(tick)?.length ?? 0])).toEqual(settled.map((tick) => [tick, 1]));
    // Each locked run restocked the product once (under the product lock, fenced).
    expect(stock).toBe(lockedRuns);
  }, 90_000);
});
