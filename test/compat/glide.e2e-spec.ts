import { GlideClient, Logger } from '@valkey/valkey-glide';
import { DistributedLockHealthIndicator, FencedResource, LockClient, LockService, UnsupportedRedisClientError } from 'nestjs-distributed-lock';
import { RedisServer } from 'redis-topology';
import { nextEvent, until } from '../harness/wait.js';

Logger.init('error');

/**
 * Valkey GLIDE as the `client` option, beyond what the conformance core (test/conformance/glide, on
 * Valkey 9) proves, here on the system's redis-server: what the user passes (the class and its
 * configuration, not a client) and what the lock client does with it (two GLIDE clients of its own,
 * both closed at the end), the script cache lost under it (GLIDE words NOSCRIPT its own way), and
 * what replaces connection events, which GLIDE does not have: health by PING and by GLIDE's own
 * account of its subscriptions, and waiters that look again once replies come back after an outage.
 */
describe('Valkey GLIDE given as `client`', () => {
  let server: RedisServer;
  const clients: LockClient[] = [];

  beforeAll(async () => {
    server = await RedisServer.start();
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });
  afterAll(async () => {
    await server?.stop();
    server?.cleanup();
  });

  const settings = (clientName?: string) => ({
    glide: GlideClient,
    configuration: { addresses: [{ host: server.host, port: server.port }], ...(clientName ? { clientName } : {}) },
  });

  async function lockClient(options: { operationTimeout?: string; clientName?: string } = {}): Promise<LockClient> {
    const { clientName, ...rest } = options;
    const client = await LockClient.connect({ client: settings(clientName), ...rest });
    clients.push(client);
    return client;
  }

  /**
   * Connections the server has open now under the client name `name` (CLIENT LIST). Counted by name,
   * not as a difference from an earlier count: GLIDE's close() only ends the socket to its core, which
   * drops the server connection a moment later, so an earlier test's closed GLIDE client may still be
   * listed when a count is taken (and gone, under load, only after it).
   */
  async function connectionsNamed(name: string): Promise<number> {
    const admin = server.client();
    try {
      const list = String(await admin.client('LIST'));
      return list.split('\n').filter((line) => line.includes(` name=${name} `)).length;
    } finally {
      admin.disconnect();
    }
  }

  it('refuses a GLIDE client itself, saying what to pass instead; a fenced resource refuses the settings', async () => {
    const glide = await GlideClient.createClient(settings().configuration);
    try {
      const refusal = await LockClient.connect({ client: glide as never }).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(UnsupportedRedisClientError);
      expect((refusal as UnsupportedRedisClientError).code).toBe('LOCK_UNSUPPORTED_CLIENT');
      expect((refusal as Error).message).toMatch(/\{ glide: GlideClient \(or GlideClusterClient\), configuration \}/);
    } finally {
      glide.close();
    }
    expect(() => FencedResource.forLock(settings() as never, 'stock')).toThrow(UnsupportedRedisClientError);
  });

  it('makes two GLIDE clients (commands, unlock notifications) and closes both', async () => {
    // Both clients are made from the configuration given, its client name included.
    const name = 'glide-count';
    expect(await connectionsNamed(name)).toBe(0);
    const locks = await lockClient({ clientName: name });
    expect(locks.mode).toBe('client');
    expect(locks.target).toBe('the valkey-glide clients made from options.client');
    expect(await connectionsNamed(name)).toBe(2);
    const held = await locks.lock('glide:count');
    expect(held.token).toBeGreaterThan(0);
    await held.unlock();
    await locks.close();
    await until(async () => (await connectionsNamed(name)) === 0, 'both GLIDE clients to close');
  });

  it("a script cache emptied under it (a restart, a failover): GLIDE's NoScriptError, then EVAL", async () => {
    const locks = await lockClient();
    const first = await locks.lock('glide:noscript', '10s');
    await first.unlock();
    const admin = server.client();
    try {
      await admin.script('FLUSH');
      await admin.config('RESETSTAT');
      const second = await locks.lock('glide:noscript', '10s');
      expect(second.token).toBeGreaterThan(first.token);
      await second.unlock();
      const stats = await admin.info('commandstats');
      expect(Number(/cmdstat_eval:calls=(\d+)/.exec(stats)?.[1] ?? 0)).toBeGreaterThanOrEqual(1);
    } finally {
      admin.disconnect();
    }
  });

  it('without connection events: health goes down when Redis does and up again; a waiter gets the lock after the restart', async () => {
    const locks = new LockService({ client: settings(), operationTimeout: '1s' });
    await locks.connect();
    const health = new DistributedLockHealthIndicator(locks);
    try {
      expect((await health.isHealthy('locks')).locks).toMatchObject({ status: 'up', subscriber: { ok: true } });
      const holder = await locks.lock('glide:restart', '60s');
      // Another owner (outside any lock context, each acquisition is its own), waiting on this client's subscriber.
      const waiting = locks.tryLock('glide:restart', '30s');
      waiting.catch(() => undefined); // awaited below; a failed test closes the client under it
      await nextEvent(locks.events, 'subscription', (event: { subscribed: boolean }) => event.subscribed);

      await server.kill();
      const down = await health.isHealthy('locks', { timeout: 500 });
      expect(down.locks).toMatchObject({ status: 'down', redis: { ok: false } });
      // GLIDE's own account of the subscriptions it wants and has: fewer in place while the server is gone.
      await until(async () => !(await health.isHealthy('locks', { timeout: 500 })).locks.subscriber.ok, 'the subscriber to report its subscriptions lost');

      await server.restart(); // without persistence: the lock is gone with the server's data
      await until(async () => (await health.isHealthy('locks', { timeout: 500 })).locks.status === 'up', 'health to recover');
      const handle = await waiting;
      expect(handle).not.toBe(false);
      if (handle) {
        expect(handle.token).toBeGreaterThan(holder.token);
        await handle.unlock();
      }
    } finally {
      await locks.close();
    }
  }, 60_000);
});
