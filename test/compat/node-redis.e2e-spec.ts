import { FencedResource, LockClient, RedisClientNotConnectedError, StaleTokenError, UnsupportedRedisClientError } from 'nestjs-distributed-lock';
import { createClient, RESP_TYPES } from 'redis';
import { RedisServer } from 'redis-topology';
import { reentrantAcquire } from '../../libs/distributed-lock/src/core/locks/reentrant/reentrant-acquire.script.js';
import { nextEvent } from '../harness/wait.js';

type NodeRedisClient = ReturnType<typeof createClient>;

/**
 * node-redis 6 as the `client` option, beyond what the conformance suite (test/conformance/node-redis)
 * proves: what the library asks of the user's client (connected first, left open, no listener left
 * behind), the script cache lost under it (NOSCRIPT), RESP2 and RESP3 (6's default) and a user's type mapping, a fenced
 * resource on it, and the clients it refuses, each with its own error.
 */
describe('a node-redis client given as `client`', () => {
  let server: RedisServer;
  const natives: NodeRedisClient[] = [];
  const clients: LockClient[] = [];

  beforeAll(async () => {
    server = await RedisServer.start();
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await Promise.all(natives.splice(0).map((native) => (native.isOpen ? native.close() : undefined)));
  });
  afterAll(async () => {
    await server?.stop();
    server?.cleanup();
  });

  async function connected(options: Parameters<typeof createClient>[0] = {}): Promise<NodeRedisClient> {
    const native = createClient({ ...options, socket: { host: server.host, port: server.port } }) as NodeRedisClient;
    native.on('error', () => undefined);
    natives.push(native);
    await native.connect();
    return native;
  }

  async function lockClient(native: object): Promise<LockClient> {
    const locks = await LockClient.connect({ client: native as NodeRedisClient, watchdogTimeout: 300 });
    clients.push(locks);
    return locks;
  }

  /** Connections the server has open now (CLIENT LIST). */
  async function connectionCount(native: NodeRedisClient): Promise<number> {
    return (await native.clientList()).length;
  }

  it.each([
    ['RESP2', { RESP: 2 as const }],
    ['RESP3', { RESP: 3 as const }],
    ['a type mapping of its own (strings as Buffers)', { commandOptions: { typeMapping: { [RESP_TYPES.BLOB_STRING]: Buffer } } }],
  ])('%s: lock, wait, renew, unlock; the client stays open, with no listener or connection of ours left', async (_label, options) => {
    const native = await connected(options);
    const other = await connected();
    const events = ['ready', 'error', 'end'];
    const listenersBefore = events.map((event) => native.listenerCount(event));
    const connectionsBefore = await connectionCount(other);
    const a = await lockClient(native);
    const b = await lockClient(other);
    expect(await connectionCount(other)).toBe(connectionsBefore + 2); // one subscriber each

    const held = await a.lock('nr:stock'); // watchdog-renewed (300 ms lease)
    expect(held.token).toBeGreaterThan(0);
    await nextEvent(a.events, 'renewed', (e: { name: string }) => e.name === 'nr:stock');
    expect(await b.tryLock('nr:stock')).toBe(false);
    expect(await a.isLocked('nr:stock')).toBe(true);

    const waiting = b.lock('nr:stock', { waitTime: '10s' });
    await nextEvent(b.events, 'subscription', (e: { subscribed: boolean }) => e.subscribed);
    const releasedAt = performance.now();
    await held.unlock();
    const next = await waiting;
    expect(performance.now() - releasedAt).toBeLessThan(1000); // woken by the notification
    expect(next.token).toBeGreaterThan(held.token);
    await next.unlock();

    await a.close();
    expect(native.isReady).toBe(true);
    expect(await native.ping()).toBeTruthy();
    expect(events.map((event) => native.listenerCount(event))).toEqual(listenersBefore);
    expect(await connectionCount(other)).toBe(connectionsBefore + 1); // b's subscriber only
  });

  it('a script cache emptied under it (a restart, a failover) is filled again: EVALSHA, NOSCRIPT, EVAL', async () => {
    const native = await connected();
    const locks = await lockClient(native);
    await (await locks.lock('nr:flush')).unlock();
    await native.scriptFlush();
    const handle = await locks.lock('nr:flush');
    expect(handle.isHeld).toBe(true);
    await handle.unlock();
    // The EVAL that answered NOSCRIPT cached the script again.
    expect(await native.scriptExists([reentrantAcquire.sha])).toEqual([1]);
  });

  it('a fenced resource on the node-redis client refuses a stale token', async () => {
    const native = await connected();
    const locks = await lockClient(native);
    expect(locks.redis).toBe(native); // as passed
    const stock = FencedResource.forLock(locks.redis, 'nr:fenced', { prefix: 'nr-data:' });
    const first = await locks.lock('nr:fenced', '200ms');
    await new Promise((resolve) => setTimeout(resolve, 300)); // the lease runs out
    const second = await locks.lock('nr:fenced');
    await stock.set(second.token, stock.key('stock'), 5);
    await expect(stock.set(first.token, stock.key('stock'), 4)).rejects.toBeInstanceOf(StaleTokenError);
    expect(await stock.get(second.token, stock.key('stock'))).toBe('5');
    await second.unlock();
  });

  it('a client not connected yet: RedisClientNotConnectedError, and the library does not connect it', async () => {
    const native = createClient({ socket: { host: server.host, port: server.port } });
    const error = await LockClient.connect({ client: native }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisClientNotConnectedError);
    expect((error as RedisClientNotConnectedError).code).toBe('LOCK_CLIENT_NOT_CONNECTED');
    expect(native.isOpen).toBe(false);
  });

  it('refuses the clients it cannot run on, saying what to pass instead', () => {
    const refused = (client: object): UnsupportedRedisClientError => {
      try {
        new LockClient({ client: client as NodeRedisClient });
      } catch (error) {
        return error as UnsupportedRedisClientError;
      }
      throw new Error('accepted');
    };
    const glide = refused({ customCommand: () => undefined, close: () => undefined });
    expect(glide).toBeInstanceOf(UnsupportedRedisClientError);
    expect(glide.code).toBe('LOCK_UNSUPPORTED_CLIENT');
    expect(glide.message).toMatch(/GLIDE/);
    // node-redis 4 (no withTypeMapping), or v5's legacy() mode.
    expect(refused({ sendCommand: () => undefined, isOpen: true }).message).toMatch(/node-redis 5/);
    const member = (): undefined => undefined;
    // A pool (createClientPool) has execute besides sendCommand.
    expect(refused({ sendCommand: member, withTypeMapping: member, execute: member }).message).toMatch(/pool/);
  });
});
