import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { FencedResource, StaleTokenError } from 'nestjs-distributed-lock';
import { startCluster, withClient, type Topology } from 'redis-topology';
import { useRedis } from '../harness/use-redis.js';

describe('FencedResource: fenced reads and writes in Redis', () => {
  const redis = useRedis();
  let data: Redis;

  beforeAll(() => {
    data = new Redis({ host: redis.server().host, port: redis.server().port });
  });
  afterAll(() => data.disconnect());

  it('records the token on a read, refuses a lower one with StaleTokenError and changes nothing; an equal one is the same holder', async () => {
    const resource = FencedResource.forLock(data, 'account:1');
    const balance = resource.key('balance');
    expect(balance).toBe('fenced:{account:1}:balance');
    await data.set(balance, 100);
    expect(await resource.get(20, balance)).toBe('100');
    expect(await resource.highestSeen()).toBe(20);
    const stale = await resource.set(19, balance, 0).catch((error: unknown) => error);
    expect(stale).toBeInstanceOf(StaleTokenError);
    expect(stale).toMatchObject({ code: 'LOCK_STALE_TOKEN', token: 19, highestSeen: 20, fenceKey: 'fenced:{account:1}:highest-token' });
    expect((stale as Error).message).toMatch(/refused: the resource .* has seen token 20 from a newer holder/);
    expect(await resource.get(20, balance)).toBe('100');
    await resource.set(20, balance, 90);
    expect(await resource.incrby(21, balance, -10)).toBe(80);
    await expect(resource.get(20, balance)).rejects.toBeInstanceOf(StaleTokenError); // reads are fenced too
  });

  it('a batch runs every command or none; hset, rpush, del and an expiring set', async () => {
    const resource = FencedResource.forLock(data, 'order:7', { prefix: 'shop:' });
    const [order, items, draft] = [resource.key('order'), resource.key('items'), resource.key('draft')];
    await data.set(draft, 'x');
    expect(
      await resource
        .batch(5)
        .hset(order, { status: 'paid', total: 42 })
        .rpush(items, 'a', 'b')
        .del(draft)
        .set(resource.key('lease'), 'v', { ttl: '60s' })
        .get(draft)
        .exec(),
    ).toEqual([2, 2, 1, 'OK', null]);
    expect(await data.hgetall(order)).toEqual({ status: 'paid', total: '42' });
    expect(await data.pttl(resource.key('lease'))).toBeGreaterThan(50_000);
    await expect(resource.batch(4).rpush(items, 'c').hset(order, { status: 'refunded' }).exec()).rejects.toBeInstanceOf(StaleTokenError);
    expect(await data.lrange(items, 0, -1)).toEqual(['a', 'b']);
    expect(await data.hget(order, 'status')).toBe('paid');
    expect(await resource.rpush(5, items, 'c')).toBe(3);
    expect(await resource.hset(6, order, { status: 'shipped' })).toBe(0);
    expect(await resource.del(6, draft)).toBe(false);
  });

  it('compares tokens exactly: real clock-floored tokens one apart, and decimal strings beyond 2^53', async () => {
    const resource = new FencedResource(data, 'exact:fence');
    await resource.get(1795424935917002, 'exact:x');
    await expect(resource.get(1795424935917001, 'exact:x')).rejects.toMatchObject({ highestSeen: 1795424935917002 });
    await resource.get('90071992547409930', 'exact:x');
    await expect(resource.get('90071992547409929', 'exact:x')).rejects.toBeInstanceOf(StaleTokenError);
    expect(await data.get('exact:fence')).toBe('90071992547409930'); // stored as given, never through a Lua number
    for (const bad of [0, -1, 1.5, '01', 'abc', Number.NaN]) {
      expect(() => resource.batch(bad as number)).toThrow(expect.objectContaining({ code: 'LOCK_INVALID_ARGUMENT' }));
    }
  });

  it('the pause story: a holder paused past its lease lets a second holder in, and its late write is refused', async () => {
    const locks = await redis.client();
    const resource = FencedResource.forLock(data, 'stock:9');
    const stock = resource.key('count');
    await data.set(stock, 10);
    const first = await locks.lock('stock:9', '100ms');
    const seen = Number(await resource.get(first.token, stock)); // reads 10
    await sleep(150); // a GC pause, a stopped VM: the lease runs out meanwhile
    const second = await locks.lock('stock:9', '5s');
    expect(second.token).toBeGreaterThan(first.token);
    await resource.set(second.token, stock, Number(await resource.get(second.token, stock)) - 1); // 9
    await expect(resource.set(first.token, stock, seen - 1)).rejects.toMatchObject({ code: 'LOCK_STALE_TOKEN', token: first.token, highestSeen: second.token });
    expect(await data.get(stock)).toBe('9');
    await second.unlock();
  });
});

describe("FencedResource in a cluster: keys in the lock's slot", () => {
  let topology: Topology;
  beforeAll(async () => {
    topology = await startCluster({ masters: 3, replicasPerMaster: 0 });
  }, 60_000);
  afterAll(async () => {
    await topology?.stop();
  });

  it("forLock keys share the lock's slot, so one fenced step may touch several of them", async () => {
    const { Cluster } = await import('ioredis');
    const cluster = new Cluster(topology.servers.map((server) => ({ host: server.host, port: server.port })));
    try {
      const resource = FencedResource.forLock(cluster, 'product:42', { prefix: 'inventory:' });
      const slot = (key: string) => withClient(topology.servers[0]!, (client) => client.call('CLUSTER', 'KEYSLOT', key));
      expect(new Set(await Promise.all(['lock:{product:42}', resource.fenceKey, resource.key('stock'), resource.key('orders')].map(slot))).size).toBe(1);
      expect(await resource.batch(7).set(resource.key('stock'), 3).rpush(resource.key('orders'), 'o1').exec()).toEqual(['OK', 1]);
      await expect(resource.incrby(6, resource.key('stock'), 1)).rejects.toBeInstanceOf(StaleTokenError);
    } finally {
      cluster.disconnect();
    }
  });
});
