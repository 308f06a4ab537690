import { metrics } from '@opentelemetry/api';
import { MeterProvider, MetricReader, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics';
import type { LockClient } from 'nestjs-distributed-lock';
import { useRedis } from '../harness/use-redis.js';
import { nextEvent, until } from '../harness/wait.js';
import type { Redis } from 'ioredis';

/** An in-test metric reader: collects on demand instead of exporting. */
class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}

  /** The data points of one instrument, as of now. */
  async points<T = number>(name: string): Promise<DataPoint<T>[]> {
    const { resourceMetrics } = await this.collect();
    const metric = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).find((m) => m.descriptor.name === name);
    return (metric?.dataPoints ?? []) as DataPoint<T>[];
  }

  /** The sum of a counter's points whose attributes include `attributes`. */
  async count(name: string, attributes: Record<string, string> = {}): Promise<number> {
    return (await this.points(name)).filter((point) => matches(point.attributes, attributes)).reduce((sum, point) => sum + point.value, 0);
  }
}

function matches(actual: Record<string, unknown>, expected: Record<string, string>): boolean {
  return Object.entries(expected).every(([key, value]) => actual[key] === value);
}

describe('OpenTelemetry metrics (an in-test meter provider, real Redis)', () => {
  const redis = useRedis();
  let reader: TestReader;
  let provider: MeterProvider;

  beforeEach(() => {
    reader = new TestReader();
    provider = new MeterProvider({ readers: [reader] });
  });
  afterEach(async () => {
    await provider.shutdown();
  });

  const connect = (extra: Parameters<typeof redis.client>[0] = {}): Promise<LockClient> => redis.client({ metrics: { meterProvider: provider }, ...extra });

  it('a contended run records waits longer than zero, a local hand-over, the holds, and the gauges while it runs', async () => {
    const client = await connect();
    const first = await client.lock('m:contended');
    const scripts = async (): Promise<number> => Number(/cmdstat_evalsha:calls=(\d+)/.exec(await (client.redis as Redis).info('commandstats'))?.[1] ?? 0);
    const before = await scripts();
    const second = client.runInNewContext(() => client.lock('m:contended', { waitTime: '5s' }));
    // The waiter's two attempts (before and after subscribing) have run: it queues, then sleeps, ready to be handed the lock.
    await until(async () => client.stats().waitingChannels === 1 && (await scripts()) >= before + 2, 'the second caller to wait');
    expect((await reader.points('distributed_lock.waiters'))[0]?.value).toBe(1);
    expect((await reader.points('distributed_lock.held')).map((p) => [p.attributes['lock.kind'], p.value])).toEqual([
      ['reentrant', 1],
      ['fair', 0],
      ['read', 0],
      ['write', 0],
    ]);
    await new Promise((resolve) => setTimeout(resolve, 30));
    await first.unlock();
    await (await second).unlock();

    const waits = await reader.points<Histogram>('distributed_lock.wait.duration');
    const acquired = waits.find((p) => p.attributes['lock.outcome'] === 'acquired')!;
    expect(acquired.attributes).toEqual({ 'lock.kind': 'reentrant', 'lock.outcome': 'acquired' }); // no lock name by default
    expect(acquired.value.count).toBe(2);
    expect(acquired.value.max).toBeGreaterThanOrEqual(0.025); // the second caller waited ~30 ms
    expect(await reader.count('distributed_lock.acquisitions', { 'lock.outcome': 'acquired' })).toBe(2);
    expect(await reader.count('distributed_lock.handovers', { 'lock.handover.to': 'local' })).toBe(1);
    const holds = await reader.points<Histogram>('distributed_lock.hold.duration');
    expect(holds.find((p) => p.attributes['lock.hold.end'] === 'released')!.value.count).toBe(2);
    expect((await reader.points('distributed_lock.waiters'))[0]?.value).toBe(0);
  });

  it('a timeout is an acquisition with outcome timeout; a grant to another process is a hand-over to a process', async () => {
    const a = await connect();
    const b = await connect(); // another client: another process as far as Redis is concerned
    const held = await a.lock('m:elsewhere');
    expect(await b.tryLock('m:elsewhere')).toBe(false); // no wait: no waiting mark either
    const waiting = b.lock('m:elsewhere', { waitTime: '5s' });
    const marked = async (): Promise<boolean> =>
      Object.keys(await (a.redis as Redis).hgetall(`${a.keyPrefix}{m:elsewhere}`)).some((field) => field.startsWith('w:'));
    await until(marked, 'b to mark its process as waiting');
    await held.unlock();
    await (await waiting).unlock();
    expect(await reader.count('distributed_lock.acquisitions', { 'lock.outcome': 'timeout' })).toBe(1);
    expect(await reader.count('distributed_lock.handovers', { 'lock.handover.to': 'process' })).toBe(1);
  });

  it('a lost lease increments the lost-leases counter by reason, and its hold is recorded as lost', async () => {
    const client = await connect();
    const lost = nextEvent(client.events, 'lost');
    await client.lock('m:lost', '60ms');
    await lost;
    expect(await reader.count('distributed_lock.leases.lost', { 'lock.lost.reason': 'lease-expired', 'lock.kind': 'reentrant' })).toBe(1);
    const holds = await reader.points<Histogram>('distributed_lock.hold.duration');
    expect(holds.find((p) => p.attributes['lock.hold.end'] === 'lost')!.value.count).toBe(1);
  });

  it('watchdog renewals are counted with their round trip; metricName adds a bounded lock.name', async () => {
    const client = await connect({ watchdogTimeout: '90ms', metrics: { meterProvider: provider, metricName: (name) => name.replace(/:.*$/, ':*') } });
    const handle = await client.lock('order:42');
    await nextEvent(client.events, 'renewed');
    await handle.unlock();
    expect(await reader.count('distributed_lock.renewals', { 'lock.outcome': 'renewed', 'lock.name': 'order:*' })).toBeGreaterThanOrEqual(1);
    const trips = await reader.points<Histogram>('distributed_lock.renewal.duration');
    expect(trips[0]!.value.count).toBeGreaterThanOrEqual(1);
    expect(trips[0]!.attributes).toEqual({ 'lock.kind': 'reentrant', 'lock.name': 'order:*' });
  });

  it('without a meter provider nothing listens (zero cost); a provider registered globally before connecting is used', async () => {
    const plain = await redis.client();
    expect(plain.events.listenerCount('acquired')).toBe(0);
    metrics.setGlobalMeterProvider(provider);
    try {
      const observed = await redis.client();
      expect(observed.events.listenerCount('acquired')).toBe(1);
      await (await observed.lock('m:global')).unlock();
      expect(await reader.count('distributed_lock.acquisitions')).toBe(1);
      const off = await redis.client({ metrics: false });
      expect(off.events.listenerCount('acquired')).toBe(0);
    } finally {
      metrics.disable();
    }
  });
});
