import { Cluster as ValkeyCluster, Redis as Valkey } from 'iovalkey';
import { LockClient } from 'nestjs-distributed-lock';
import { RedisServer, startCluster, type Topology } from 'redis-topology';
import { nextEvent } from '../harness/wait.js';
import type { Redis } from 'ioredis';

/**
 * iovalkey, the Valkey project's fork of ioredis, as the `client` option: a user's own connection
 * (never closed by us), with lock, wait (woken by a release elsewhere), renewal and unlock against a
 * real redis-server, single and cluster.
 */
describe('an iovalkey client given as `client`', () => {
  let server: RedisServer;
  let cluster: Topology;
  const owned: { disconnect(): void }[] = [];
  const clients: LockClient[] = [];

  beforeAll(async () => {
    [server, cluster] = await Promise.all([RedisServer.start(), startCluster({ masters: 3, replicasPerMaster: 0 })]);
  }, 60_000);
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    owned.splice(0).forEach((connection) => connection.disconnect());
  });
  afterAll(async () => {
    await server?.stop();
    server?.cleanup();
    await cluster?.stop();
  });

  async function lockClient(client: Valkey | ValkeyCluster): Promise<LockClient> {
    owned.push(client);
    const locks = await LockClient.connect({ client, watchdogTimeout: 300 });
    clients.push(locks);
    return locks;
  }

  const connections = {
    single: () => new Valkey({ host: server.host, port: server.port, lazyConnect: true }),
    cluster: () =>
      new ValkeyCluster(
        cluster.servers.map((node) => ({ host: node.host, port: node.port })),
        { lazyConnect: true },
      ),
  };

  it.each(Object.keys(connections) as (keyof typeof connections)[])('%s: lock, wait, renew, unlock; the client stays open and ours', async (kind) => {
    const connection = connections[kind]();
    const ours = (): number[] => ['ready', 'error', 'message', 'smessage'].map((event) => connection.listenerCount(event));
    const listenersBefore = ours();
    const a = await lockClient(connection);
    const b = await lockClient(connections[kind]());
    // iovalkey's Cluster subscribes through one node, which cannot carry sharded channels of every slot.
    expect(a.unlockNotifications?.flavour).toBe('plain');

    const held = await a.lock('valkey:stock'); // watchdog-renewed (300 ms lease)
    expect(held.token).toBeGreaterThan(0);
    await nextEvent(a.events, 'renewed', (e: { name: string }) => e.name === 'valkey:stock');
    expect(await b.tryLock('valkey:stock')).toBe(false);

    const waiting = b.lock('valkey:stock', { waitTime: '10s' });
    await nextEvent(b.events, 'subscription', (e: { subscribed: boolean }) => e.subscribed);
    const releasedAt = performance.now();
    await held.unlock();
    const next = await waiting;
    expect(performance.now() - releasedAt).toBeLessThan(1000); // woken by the notification
    expect(next.token).toBeGreaterThan(held.token);
    await next.unlock();
    expect(await a.isLocked('valkey:stock')).toBe(false);

    await a.close();
    expect((a.redis as Redis).status).toBe('ready'); // the user's connection is left open
    // ... with no listener of ours left on it (a service that opens and closes lock clients on one
    // connection would otherwise pile them up).
    expect(ours()).toEqual(listenersBefore);
  });
});
