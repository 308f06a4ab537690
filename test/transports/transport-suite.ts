import { randomUUID } from 'node:crypto';
import type { LockClient } from 'nestjs-distributed-lock';
import { FaultProxy, stopAllFaultProxies } from 'redis-topology';
import { useRedis } from '../harness/use-redis.js';
import { stopAllWorkers, type WorkerMessage, type WorkerProcess } from '../harness/worker-process.js';
import { closeApp, logged, startApp } from './transport-apps.js';
import type { Redis } from 'ioredis';

/** The handlers every request/response transport's app has (apps/*.app.ts). */
export type Handler = 'increment' | 'increment-unlocked' | 'busy' | 'crash' | 'lost';

/** What a client got: the handler's value, or the error as its transport delivered it. */
export type Reply = { value: unknown } | { error: unknown };

/** What a client makes of a reply, reading it as docs/guides/transports.md tells users to. */
export interface Reading {
  outcome: 'ok' | 'busy' | 'unavailable' | 'bad-key' | 'lost' | 'crash';
  code?: string;
  retryAfterMs?: number;
  reason?: string;
}

const OUTCOMES: Record<string, Reading['outcome']> = {
  LOCK_ACQUIRE_TIMEOUT: 'busy',
  LOCK_BACKEND_ERROR: 'unavailable',
  LOCK_CLIENT_CLOSED: 'unavailable',
  LOCK_NAME_TEMPLATE: 'bad-key',
  LOCK_INVALID_ARGUMENT: 'bad-key',
  LOCK_LOST: 'lost',
};

/** How a client reads the `{ status: 'error', code, message, retryAfterMs?, reason? }` of RPC, WebSocket and GraphQL's extensions: a crash has no code. */
export function readLockError(error: { code?: unknown; retryAfterMs?: unknown; reason?: unknown }): Reading {
  const code = typeof error.code === 'string' ? error.code : undefined;
  return {
    outcome: (code && OUTCOMES[code]) || 'crash',
    ...(code ? { code } : {}),
    ...(typeof error.retryAfterMs === 'number' ? { retryAfterMs: error.retryAfterMs } : {}),
    ...(typeof error.reason === 'string' ? { reason: error.reason } : {}),
  };
}

/** The exact `{ status: 'error', ... }` object an RPC or WebSocket client gets for `outcome` (`data` names the payload in messages). */
export function lockErrorBody(outcome: Reading['outcome'], data: string): Record<string, unknown> {
  switch (outcome) {
    case 'busy':
      return { status: 'error', code: 'LOCK_ACQUIRE_TIMEOUT', message: expect.stringMatching(/busy.*Retry after \d+ s/), retryAfterMs: expect.any(Number) };
    case 'unavailable':
      return { status: 'error', code: 'LOCK_BACKEND_ERROR', message: expect.stringMatching(/store is unavailable/), retryAfterMs: 1000 };
    case 'bad-key':
      return { status: 'error', code: 'LOCK_NAME_TEMPLATE', message: expect.stringContaining(`${data}.id`) };
    case 'lost':
      return { status: 'error', code: 'LOCK_LOST', message: expect.stringMatching(/was lost/), retryAfterMs: 1000, reason: 'lease-expired' };
    default:
      return { status: 'error', message: 'Internal server error' };
  }
}

export interface TransportClient {
  call(handler: Handler, data?: Record<string, unknown>): Promise<Reply>;
  close(): Promise<void>;
}

export interface TransportUnderTest {
  /** The app file (apps/<app>.app.ts), and the extra environment of its process `i` (0 or 1). */
  app: string;
  env?: (i: number) => Record<string, string> | Promise<Record<string, string>>;
  connect(ready: WorkerMessage): Promise<TransportClient>;
  /** The client's reading of a reply. */
  read(reply: Reply): Reading;
  /** Checks the reply's exact shape for `outcome` (what transports.md documents for this transport). */
  expectShape(outcome: Reading['outcome'], reply: Reply): void;
}

export interface TransportRun {
  apps: WorkerProcess[];
  /** Each app's `ready` message. */
  ready: WorkerMessage[];
  clients: TransportClient[];
  proxy: FaultProxy;
  /** A client of the test's own, straight to Redis (not through the proxy), to hold locks and read counters. */
  other: () => LockClient;
  run: string;
}

/**
 * Two processes of one transport's app on one redis-server (through a fault proxy the test controls),
 * a client of each, and the scenarios every transport must pass: mutual exclusion (a read-pause-write
 * handler loses no update) and its unlocked control (which does), busy, a crash of the handler, a bad
 * key, a lost lease, start-up validation, an outage, and a clean app.close(). `more` adds a
 * transport's own scenarios, run before the outage and the close.
 */
export function describeTransport(title: string, transport: TransportUnderTest, more?: (run: () => TransportRun) => void): void {
  describe(title, () => {
    const redis = useRedis();
    let state: TransportRun | undefined;
    let other: LockClient;
    const run = (): TransportRun => state!;
    const call = (i: number, handler: Handler, data?: Record<string, unknown>): Promise<Reply> => run().clients[i % 2]!.call(handler, data);

    beforeAll(async () => {
      const proxy = await FaultProxy.start({ targetPort: redis.server().port });
      const id = randomUUID().slice(0, 8);
      const env = async (i: number) => ({ ...(await transport.env?.(i)), DISTRIBUTED_LOCK_REDIS_PORT: proxy.port, RUN_ID: id });
      const apps = await Promise.all([startApp(transport.app, await env(0)), startApp(transport.app, await env(1))]);
      const clients = await Promise.all(apps.map(({ ready }) => transport.connect(ready)));
      state = { apps: apps.map(({ process }) => process), ready: apps.map(({ ready }) => ready), clients, proxy, other: () => other, run: id };
    }, 60_000);
    beforeEach(async () => {
      other = await redis.client();
    });
    afterAll(async () => {
      await Promise.all((state?.clients ?? []).map((client) => client.close()));
      await stopAllWorkers();
      await stopAllFaultProxies();
    });

    it('mutual exclusion across two processes: no lost update; the unlocked control loses updates', async () => {
      const N = 20;
      const unlocked = await Promise.all(Array.from({ length: N }, (_, i) => call(i, 'increment-unlocked')));
      const locked = await Promise.all(Array.from({ length: N }, (_, i) => call(i, 'increment')));
      expect(locked.map((reply) => transport.read(reply).outcome)).toEqual(Array(N).fill('ok'));
      expect(unlocked.map((reply) => transport.read(reply).outcome)).toEqual(Array(N).fill('ok'));
      expect(Number(await (other.redis as Redis).get(`${run().run}:counter:locked`))).toBe(N);
      expect(Number(await (other.redis as Redis).get(`${run().run}:counter:unlocked`))).toBeLessThan(N);
    });

    it('busy: the client reads the code and when to retry (from the holder), and the service logs it below a warning', async () => {
      const holder = await other.lock(`${run().run}:busy:1`, '20s');
      const reply = await call(0, 'busy', { id: '1' });
      await holder.unlock();
      const reading = transport.read(reply);
      expect(reading).toMatchObject({ outcome: 'busy', code: 'LOCK_ACQUIRE_TIMEOUT' });
      expect(reading.retryAfterMs).toBeGreaterThan(1000);
      expect(reading.retryAfterMs).toBeLessThanOrEqual(20_000);
      transport.expectShape('busy', reply);
      await run().apps[0]!.waitFor((m) => m.type === 'log' && m.level === 'debug' && /busy:1" stayed busy/.test(String(m.message)), 'the debug line');
      expect(logged(run().apps[0]!, 'warn', /busy/)).toEqual([]);
      expect(transport.read(await call(0, 'busy', { id: '1' })).outcome).toBe('ok'); // free again
    });

    it("a crash of the handler is not a lock failure: the transport's own error, no lock code", async () => {
      const reply = await call(1, 'crash');
      expect(transport.read(reply).outcome).toBe('crash');
      transport.expectShape('crash', reply);
    });

    it('a bad key (the request lacks the field the template reads): the client reads LOCK_NAME_TEMPLATE', async () => {
      const reply = await call(0, 'busy', {});
      expect(transport.read(reply)).toMatchObject({ outcome: 'bad-key', code: 'LOCK_NAME_TEMPLATE' });
      transport.expectShape('bad-key', reply);
    });

    it("a lease lost while the handler runs (onLost: 'abort-request'): the client reads LOCK_LOST at once", async () => {
      const reply = await call(1, 'lost', { id: '1' });
      expect(transport.read(reply)).toMatchObject({ outcome: 'lost', code: 'LOCK_LOST', reason: 'lease-expired', retryAfterMs: 1000 });
      transport.expectShape('lost', reply);
      await run().apps[1]!.waitFor((m) => m.type === 'log' && m.level === 'warn' && /lost:1" was lost/.test(String(m.message)), 'the lost lock warning');
    });

    it('start-up: a key template its requests can never fill fails app.init, naming the handler', async () => {
      run().apps[0]!.send('bad-key');
      const refused = await run().apps[0]!.waitFor((m) => m.type.startsWith('bad-key-'), 'the bad app to start or be refused');
      expect(refused).toMatchObject({ type: 'bad-key-refused', code: 'LOCK_INVALID_CONFIG' });
      expect(refused.message).toMatch(/BadKey\w+\.bad/);
    });

    more?.(run);

    it('Redis unreachable: the client reads "unavailable, retry shortly" within waitTime + operationTimeout; logged once per outage', async () => {
      const { proxy, apps } = run();
      proxy.blackhole();
      const started = performance.now();
      const replies = await Promise.all([call(0, 'busy', { id: 'outage-1' }), call(0, 'busy', { id: 'outage-2' })]);
      expect(performance.now() - started).toBeLessThan(100 + 500 + 1500); // waitTime + operationTimeout + a loaded machine's slack
      for (const reply of replies) {
        expect(transport.read(reply)).toMatchObject({ outcome: 'unavailable', code: 'LOCK_BACKEND_ERROR', retryAfterMs: 1000 });
        transport.expectShape('unavailable', reply);
      }
      // Two failures, one warning; checked before Redis is back: replies the black-hole held arrive
      // late then, and may be counted as the start of another run of failures.
      await apps[0]!.waitFor(
        (m) => m.type === 'log' && m.level === 'warn' && /^Redis lock operations are failing/.test(String(m.message)),
        'the outage warning',
      );
      expect(logged(apps[0]!, 'warn', /^Redis lock operations are failing/)).toHaveLength(1);
      proxy.heal();
      expect(transport.read(await call(0, 'busy', { id: 'outage-3' })).outcome).toBe('ok');
      await apps[0]!.waitFor((m) => m.type === 'log' && /answers lock operations again/.test(String(m.message)), 'the end of the outage to be logged');
    });

    it('app.close(): each process closes and exits by itself, no lock is left; nothing was logged as an error but the crash', async () => {
      for (const app of run().apps) {
        const { code } = await closeApp(app);
        expect(code).toBe(0);
        expect(logged(app, 'error', /./).filter((line) => !/the handler crashed/.test(line))).toEqual([]);
      }
      // Every lock of the run was released (what stays is data: the counters, and each lock's fence, which keeps tokens increasing).
      const left = (await (other.redis as Redis).keys(`*${run().run}*`)).filter((key) => !key.startsWith(`${run().run}:counter:`) && !key.endsWith(':fence'));
      expect(left).toEqual([]);
    });
  });
}
