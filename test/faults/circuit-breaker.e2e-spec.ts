import { MeterProvider, MetricReader, type DataPoint } from '@opentelemetry/sdk-metrics';
import { DistributedLockHealthIndicator, LockClient, LockService, type LockCircuitEvent, type LockClientOptions } from 'nestjs-distributed-lock';
import { FaultProxy, stopAllFaultProxies } from 'redis-topology';
import { logCommands, type LoggedCommand } from '../harness/command-log.js';
import { useRedis } from '../harness/use-redis.js';
import { nextEvent } from '../harness/wait.js';

/**
 * The circuit breaker (issue 33, item 7) against a real redis-server behind the TCP fault proxy,
 * black-holed (nothing delivered, nothing refused; the held bytes are delivered on heal, so every
 * command the client sent meanwhile reaches Redis then and MONITOR shows it). Failures in a row open
 * a node's circuit; calls after that are answered at once, not sent (none of them reaches Redis); a
 * probe closes it when the link heals; renewals are sent through it; with the breaker off, each call
 * waits out the operation timeout and reaches Redis.
 */

const OPERATION_TIMEOUT_MS = 300;
const FAILURES = 2;
/** Calls made once the circuit is open. */
const AFTER = 5;

/** The commands sent to Redis (not those its scripts ran) that name lock `name` (its keys carry `{name}`). */
const naming = (commands: LoggedCommand[], name: string): LoggedCommand[] =>
  commands.filter((command) => command.source !== 'lua' && command.args.some((arg) => arg.includes(`{${name}}`)));

/** An in-test metric reader: collects on demand. */
class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
  async points(name: string): Promise<DataPoint<number>[]> {
    const { resourceMetrics } = await this.collect();
    const metric = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).find((m) => m.descriptor.name === name);
    return (metric?.dataPoints ?? []) as DataPoint<number>[];
  }
}

describe('circuit breaker: a node that stops answering is refused at once, and used again when a probe gets a reply', () => {
  const redis = useRedis();
  afterEach(stopAllFaultProxies);

  async function proxied(circuitBreaker: LockClientOptions['circuitBreaker'], extra: LockClientOptions = {}) {
    const proxy = await FaultProxy.start({ targetPort: redis.server().port });
    const client = await redis.client({
      connection: { mode: 'single', host: proxy.host, port: proxy.port },
      operationTimeout: OPERATION_TIMEOUT_MS,
      circuitBreaker,
      ...extra,
    });
    const changes: LockCircuitEvent['state'][] = [];
    client.events.on('circuit', (event) => changes.push(event.state));
    await (await client.lock('cb:warm', '5s')).unlock(); // scripts cached, the server's clock known
    return { proxy, client, changes };
  }

  /** Calls that fail (no reply within the operation timeout) until the circuit opens. */
  async function openCircuit(client: LockClient): Promise<void> {
    const opened = nextEvent<[LockCircuitEvent]>(client.events, 'circuit', (event) => event.state === 'open');
    for (let i = 0; i < FAILURES; i++) {
      await expect(client.tryLock(`cb:before:${i}`)).rejects.toMatchObject({ code: 'LOCK_BACKEND_ERROR' });
    }
    const [event] = await opened;
    expect(event).toMatchObject({ node: client.target, state: 'open' });
    // At least the attempts; a phantom release of an attempt without a reply may travel in their batch.
    expect(event.failures).toBeGreaterThanOrEqual(FAILURES);
    expect(event.error?.message).toBe(`no reply within ${OPERATION_TIMEOUT_MS} ms`);
  }

  it('after the failures in a row, calls are refused without being sent (LOCK_CIRCUIT_OPEN), and a probe closes the circuit once the link heals', async () => {
    const { proxy, client, changes } = await proxied({ failures: FAILURES, resetAfter: 100 });
    const admin = redis.server().client();
    const log = await logCommands(admin);
    proxy.blackhole();
    await openCircuit(client);

    for (let i = 0; i < AFTER; i++) {
      const refused = client.tryLock('cb:after');
      await expect(refused).rejects.toMatchObject({ code: 'LOCK_CIRCUIT_OPEN', node: client.target });
      await expect(refused).rejects.toThrow(/was not sent: the circuit breaker of .* is open .* nothing changed in Redis/);
    }
    expect(client.circuits()).toEqual([expect.objectContaining({ node: client.target, state: expect.stringMatching(/^(open|half-open)$/) })]);

    // Probes every 100 ms get no reply while the link is black-holed; the first one after it heals does.
    const closed = nextEvent<[LockCircuitEvent]>(client.events, 'circuit', (event) => event.state === 'closed');
    await nextEvent(client.events, 'circuit', (event: LockCircuitEvent) => event.state === 'half-open');
    proxy.heal();
    await closed;
    expect(changes.slice(0, 2)).toEqual(['open', 'half-open']);
    expect(changes.at(-1)).toBe('closed');
    expect(client.circuits()).toEqual([expect.objectContaining({ state: 'closed', failures: 0 })]);
    const handle = await client.tryLock('cb:after');
    expect(handle).not.toBe(false);
    if (handle) await handle.unlock();

    // What reached Redis through the link: the attempts that opened the circuit, and for cb:after only
    // the acquisition made once it had closed (its acquire and its release).
    const commands = await log.stop();
    expect(naming(commands, 'cb:before:0').length).toBeGreaterThan(0);
    expect(naming(commands, 'cb:after').map((command) => command.args[0]!.toLowerCase())).toEqual(['evalsha', 'evalsha']);
  });

  it('control: with the breaker off, each call waits out the operation timeout and reaches Redis', async () => {
    const { proxy, client, changes } = await proxied(false);
    const admin = redis.server().client();
    const log = await logCommands(admin);
    proxy.blackhole();
    for (let i = 0; i < FAILURES + AFTER; i++) {
      const failed = client.tryLock('cb:after');
      await expect(failed).rejects.toMatchObject({ code: 'LOCK_BACKEND_ERROR' });
      await expect(failed).rejects.toThrow(`no reply within ${OPERATION_TIMEOUT_MS} ms`);
    }
    proxy.heal();
    const handle = await client.tryLock('cb:warm');
    if (handle) await handle.unlock(); // through the link: everything held before it has run
    const commands = await log.stop();
    const attempts = naming(commands, 'cb:after').filter((command) => command.args[0]!.toLowerCase() === 'evalsha');
    expect(attempts.length).toBeGreaterThanOrEqual(FAILURES + AFTER);
    expect(changes).toEqual([]);
    expect(client.circuits()).toEqual([]);
  });

  it('a lease being renewed is renewed through an open circuit: its renewal, not a probe, finds Redis back and closes it', async () => {
    // Renewals every 2 s, a lease of 6 s; the probe waits 60 s, so only the renewal can close the circuit.
    const { proxy, client, changes } = await proxied({ failures: FAILURES, resetAfter: '60s' }, { watchdogTimeout: '6s' });
    const held = await client.lock('cb:held');
    const lost: unknown[] = [];
    client.events.on('lost', (event) => lost.push(event));
    proxy.blackhole();
    await openCircuit(client);
    await expect(client.tryLock('cb:other')).rejects.toMatchObject({ code: 'LOCK_CIRCUIT_OPEN' });
    const renewed = nextEvent(client.events, 'renewed', (event: { name: string }) => event.name === 'cb:held');
    const closed = nextEvent<[LockCircuitEvent]>(client.events, 'circuit', (event) => event.state === 'closed');
    proxy.heal();
    await Promise.all([renewed, closed]);
    expect(changes).toEqual(['open', 'closed']); // no probe
    expect(held.isHeld).toBe(true);
    expect(lost).toEqual([]);
    await held.unlock();
  });

  it('the state is in the health indicator (down while open) and in the metrics (a gauge per node, changes counted)', async () => {
    const proxy = await FaultProxy.start({ targetPort: redis.server().port });
    const reader = new TestReader();
    const provider = new MeterProvider({ readers: [reader] });
    const service = new LockService({
      connection: { mode: 'single', host: proxy.host, port: proxy.port },
      operationTimeout: OPERATION_TIMEOUT_MS,
      circuitBreaker: { failures: FAILURES, resetAfter: '60s' },
      metrics: { meterProvider: provider },
      env: {},
    });
    try {
      await service.connect();
      const health = new DistributedLockHealthIndicator(service);
      const gauge = async () => (await reader.points('distributed_lock.circuit.open')).map((point) => [point.attributes['redis.node'], point.value]);
      expect((await health.isHealthy('locks')).locks).toMatchObject({ status: 'up', circuit: { ok: true, detail: 'closed' } });
      expect(await gauge()).toEqual([[service.target, 0]]);

      proxy.blackhole();
      await openCircuit(service);
      const { failures } = service.circuits()[0]!;
      expect(failures).toBeGreaterThanOrEqual(FAILURES);
      expect(await gauge()).toEqual([[service.target, 1]]);
      const changes = await reader.points('distributed_lock.circuit.changes');
      expect(changes.map((point) => [point.attributes['circuit.state'], point.value])).toEqual([['open', 1]]);
      // Healed, Redis answers the check's pings, but the circuit it read as the check started was open:
      // down for the circuit alone (the replies to the held attempts may close it right after).
      proxy.heal();
      const { locks } = await health.isHealthy('locks');
      expect(locks).toMatchObject({ status: 'down', redis: { ok: true }, scripts: { ok: true } });
      expect(locks.circuit).toEqual({ ok: false, detail: `${service.target}: open after ${failures} failures in a row` });
    } finally {
      await service.close();
      await provider.shutdown();
    }
  });
});
