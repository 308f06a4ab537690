import type { Redis } from 'ioredis';
import { RESTOCK_WORKER_KEYS } from '../../apps/inventory/src/inventory/inventory.store.js';
import { startApp, stopApp, type InventoryApp } from '../harness/inventory-app.js';
import { useRedis } from '../harness/use-redis.js';
import { until } from '../harness/wait.js';

const LEASE_MS = 1500;
const INTERVAL_MS = 50;
const PRODUCT = 'worker-e2e';

/** One step of the worker as recorded in Redis: its term (null for the control), instance, Redis time. */
type Step = { term: number | null; instance: string; at: number };

/**
 * The checker: the steps of each group (a term; for the control, an instance) span an interval of
 * Redis time; two intervals that overlap are two workers acting at once. Every overlapping pair.
 */
function overlaps(steps: Step[], group: (step: Step) => string): [string, string][] {
  const spans = new Map<string, { from: number; to: number }>();
  for (const step of steps) {
    const key = group(step);
    const span = spans.get(key);
    spans.set(key, span ? { from: Math.min(span.from, step.at), to: Math.max(span.to, step.at) } : { from: step.at, to: step.at });
  }
  const sorted = [...spans.entries()].sort(([, a], [, b]) => a.from - b.from);
  const found: [string, string][] = [];
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j < sorted.length && sorted[j]![1].from <= sorted[i]![1].to; j++) found.push([sorted[i]![0], sorted[j]![0]]);
  }
  return found;
}

async function redisMs(admin: Redis): Promise<number> {
  const [seconds, micros] = await admin.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

describe('the restock worker with @Leader in a horizontally scaled app (3 processes)', () => {
  const redis = useRedis();
  const apps: InventoryApp[] = [];
  afterAll(async () => {
    await Promise.all(apps.map(stopApp));
  });

  it('runs on exactly one instance at a time: SIGSTOP and SIGKILL of the leader move it within the lease, app.close() hands it over at once; the unlocked control overlaps', async () => {
    const admin = redis.server().client();
    const env = {
      DISTRIBUTED_LOCK_REDIS_MODE: 'single',
      DISTRIBUTED_LOCK_REDIS_HOST: '127.0.0.1',
      DISTRIBUTED_LOCK_REDIS_PORT: String(redis.server().port),
      DISTRIBUTED_LOCK_WATCHDOG_TIMEOUT: `${LEASE_MS}ms`,
      INVENTORY_RESTOCK_WORKER: 'true',
      INVENTORY_RESTOCK_WORKER_CONTROL: 'true',
      INVENTORY_RESTOCK_WORKER_INTERVAL: String(INTERVAL_MS),
      INVENTORY_RESTOCK_PRODUCT: PRODUCT,
    };
    await admin.set(`inventory:{product:${PRODUCT}}:stock`, 0);
    apps.push(...(await Promise.all(['app-1', 'app-2', 'app-3'].map((id) => startApp(id, env)))));

    const steps = async (key: string = RESTOCK_WORKER_KEYS.runs): Promise<Step[]> => (await admin.lrange(key, 0, -1)).map((line) => JSON.parse(line) as Step);
    const latest = async (): Promise<Step> => {
      await until(async () => (await admin.llen(RESTOCK_WORKER_KEYS.runs)) > 0, 'a step of the worker');
      return (await steps()).at(-1)!;
    };
    /** The first step of a term higher than `term` (the next leader at work). */
    const nextLeader = async (term: number, what: string): Promise<Step> => {
      await until(async () => (await steps()).some((step) => step.term! > term), what, 20_000);
      return (await steps()).find((step) => step.term! > term)!;
    };
    const appOf = (step: Step): InventoryApp => apps.find((app) => app.id === step.instance)!;

    // Every instance's control has run, and the leader has made a few steps.
    await until(
      async () => new Set((await steps(RESTOCK_WORKER_KEYS.unlocked)).map((step) => step.instance)).size === 3,
      'the control in every instance',
      20_000,
    );
    await until(async () => (await admin.llen(RESTOCK_WORKER_KEYS.runs)) >= 5, 'five steps of the leader');

    // 1. The leader pauses (SIGSTOP) past its lease: another instance takes over within it.
    const paused = await latest();
    appOf(paused).child.kill('SIGSTOP');
    const pausedAt = await redisMs(admin);
    const afterPause = await nextLeader(paused.term!, 'a new leader after the pause');
    expect(afterPause.instance).not.toBe(paused.instance);
    expect(afterPause.at - pausedAt).toBeLessThan(LEASE_MS + 1000);
    // Resumed, it is told before it starts another step, and stands again. (A step the pause caught
    // half-way, after its leadership check, goes on when it resumes: the term's fencing refuses it.)
    appOf(paused).child.kill('SIGCONT');
    await until(
      () => appOf(paused).log.join('').includes(`No longer leader of "inventory:restock-worker" (term ${paused.term}`),
      'the resumed leader to be told',
    );

    // 2. The leader is killed: another takes over within the lease.
    const killed = await latest();
    appOf(killed).child.kill('SIGKILL');
    const killedAt = await redisMs(admin);
    const afterKill = await nextLeader(killed.term!, 'a new leader after the kill');
    expect(afterKill.instance).not.toBe(killed.instance);
    expect(afterKill.at - killedAt).toBeLessThan(LEASE_MS + 1000);

    // 3. The leader closes (SIGTERM: app.close()): the worker stops and hands over at once.
    const closing = await latest();
    await stopApp(appOf(closing));
    const afterClose = await nextLeader(closing.term!, 'a new leader after the close');
    const lastOfClosed = (await steps()).filter((step) => step.term === closing.term).at(-1)!;
    expect(afterClose.instance).not.toBe(closing.instance);
    expect(afterClose.at - lastOfClosed.at).toBeLessThan(LEASE_MS / 2);

    await Promise.all(apps.map(stopApp));
    const all = await steps();
    const refused = await steps(RESTOCK_WORKER_KEYS.refused);
    const control = await steps(RESTOCK_WORKER_KEYS.unlocked);
    await admin.quit();

    // The control: the unlocked worker ran in several instances at once.
    expect(overlaps(control, (step) => step.instance).length).toBeGreaterThan(0);
    // The checker: terms never overlap, each term is one instance, terms rise with time, no deposed leader acted.
    expect(overlaps(all, (step) => String(step.term))).toEqual([]);
    const instancesPerTerm = new Map<number, Set<string>>();
    for (const step of all) instancesPerTerm.set(step.term!, (instancesPerTerm.get(step.term!) ?? new Set()).add(step.instance));
    expect([...instancesPerTerm.values()].every((instances) => instances.size === 1)).toBe(true);
    expect(instancesPerTerm.size).toBeGreaterThanOrEqual(4);
    const terms = all.map((step) => step.term!);
    expect(terms).toEqual([...terms].sort((a, b) => a - b));
    // Refused: at most the one step of the paused leader that the pause caught half-way, never another.
    expect(refused.filter((step) => step.term !== paused.term || step.instance !== paused.instance)).toEqual([]);
    expect(refused.length).toBeLessThanOrEqual(1);
  }, 90_000);
});
