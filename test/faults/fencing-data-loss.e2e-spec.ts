import { Redis } from 'ioredis';
import { LockClient } from 'nestjs-distributed-lock';
import { clusterMasterOf, currentSentinelMaster, RedisServer, startCluster, startSentinelTopology, waitUntil, withClient, type Topology } from 'redis-topology';
import { FencedCounter } from '../harness/fenced-counter.mjs';
import { cutReplicationLink, readOn } from '../harness/replication.js';
import { LockKeys } from '../../libs/distributed-lock/src/core/scripts/lock-keys.js';

/**
 * Reliability scenario 19: the lock Redis loses its data (restart without persistence, or a failover
 * to a replica the last writes had not reached) while a fenced resource has seen high tokens. The
 * next holder's fenced write must be accepted at once: tokens never go backwards for a name.
 *
 * Each test keeps the control that shows the failure: the lock Redis's counter after the loss is
 * behind the resource, so a token drawn from the counter alone (INCR, as before) would be refused.
 */
describe('fencing tokens survive data loss of the lock Redis', () => {
  let resourceServer: RedisServer;
  let resourceRedis: Redis;
  const clients: LockClient[] = [];

  beforeAll(async () => {
    resourceServer = await RedisServer.start();
    resourceRedis = resourceServer.client();
  });
  /** Clients go before the servers they talk to, so none is left reconnecting. */
  const closeClients = (): Promise<unknown> => Promise.all(clients.splice(0).map((client) => client.close()));
  afterEach(async () => {
    await closeClients();
    await resourceRedis.flushall();
  });
  afterAll(async () => {
    await resourceServer.stop();
    resourceServer.cleanup();
  });

  async function connect(env: Record<string, string>): Promise<LockClient> {
    const client = await LockClient.connect({ env, operationTimeout: 1000 });
    clients.push(client);
    return client;
  }

  /** Takes the lock `times` times, each time incrementing the fenced counter; returns the last token. */
  async function holdAndWrite(client: LockClient, name: string, counter: FencedCounter, times: number): Promise<number> {
    let token = 0;
    for (let i = 0; i < times; i++) {
      const handle = await client.lock(name, { waitTime: '20s' });
      token = handle.token;
      const read = await counter.read(token);
      expect(read.accepted).toBe(true);
      if (!read.accepted) throw new Error('unreachable');
      expect((await counter.write(token, read.value + 1)).accepted).toBe(true);
      await handle.unlock();
    }
    return token;
  }

  /** After the loss: the next holder's first fenced read and write are accepted, and its token is higher. */
  async function expectAcceptedAtOnce(client: LockClient, name: string, counter: FencedCounter, lastToken: number, writesBefore: number): Promise<void> {
    const handle = await client.lock(name, { waitTime: '30s' });
    expect(handle.token).toBeGreaterThan(lastToken);
    const read = await counter.read(handle.token);
    expect(read).toEqual({ accepted: true, value: writesBefore });
    expect(await counter.write(handle.token, writesBefore + 1)).toEqual({ accepted: true, value: writesBefore + 1 });
    await handle.unlock();
  }

  /**
   * Tokens go to the master, the replica is cut off, more tokens go to the master only, the master
   * dies and `promote` makes the replica the master. The control: the promoted counter is behind
   * the resource, so a token from it alone (INCR) would be refused. Then the next holder's fenced
   * write must be accepted at once.
   */
  async function failOverToLaggingReplica(
    env: Record<string, string>,
    name: string,
    master: RedisServer,
    replica: RedisServer,
    promote: () => Promise<void>,
  ): Promise<void> {
    const client = await connect(env);
    const counter = new FencedCounter(resourceRedis);
    await holdAndWrite(client, name, counter, 5);
    await waitUntil(
      async () => (await readOn(replica, new LockKeys('lock:', env.DISTRIBUTED_LOCK_REDIS_MODE === 'cluster').fence(name))) !== null,
      'the counter to reach the replica',
    );

    await cutReplicationLink(replica);
    const lastToken = await holdAndWrite(client, name, counter, 15);
    master.killNow(); // SIGKILL: what was not replicated is lost
    await promote();

    const stale = Number(await readOn(replica, new LockKeys('lock:', env.DISTRIBUTED_LOCK_REDIS_MODE === 'cluster').fence(name)));
    expect(stale).toBeLessThan(lastToken);
    expect((await counter.read(stale + 1)).accepted).toBe(false);

    await expectAcceptedAtOnce(client, name, counter, lastToken, 20);
  }

  it('single: redis-server restarted without persistence', async () => {
    const lockServer = await RedisServer.start();
    try {
      const env = { DISTRIBUTED_LOCK_REDIS_MODE: 'single', DISTRIBUTED_LOCK_REDIS_HOST: lockServer.host, DISTRIBUTED_LOCK_REDIS_PORT: String(lockServer.port) };
      const client = await connect(env);
      const counter = new FencedCounter(resourceRedis);
      const lastToken = await holdAndWrite(client, 'loss:single', counter, 20);

      await lockServer.restart(); // empty: the counter is gone with the data
      // Control: a counter kept by INCR alone starts again at 1, and the resource refuses it.
      const restartedAt1 = await withClient(lockServer, (redis) => redis.incr('control:fence'));
      expect(restartedAt1).toBe(1);
      expect((await counter.read(restartedAt1)).accepted).toBe(false);

      await waitUntil(async () => (await (client.redis as Redis).ping()) === 'PONG', 'the client to reconnect');
      await expectAcceptedAtOnce(client, 'loss:single', counter, lastToken, 20);
    } finally {
      await closeClients();
      await lockServer.stop();
      lockServer.cleanup();
    }
  }, 60_000);

  it('sentinel: the master dies and a replica that missed the last tokens is promoted', async () => {
    const topology = await startSentinelTopology({ replicas: 1 });
    try {
      const [master, replica] = topology.servers as [RedisServer, RedisServer];
      await failOverToLaggingReplica(topology.env, 'loss:sentinel', master, replica, () =>
        waitUntil(async () => (await currentSentinelMaster(topology)) === `${replica.host}:${replica.port}`, 'sentinel to promote the replica', 30_000),
      );
    } finally {
      await closeClients();
      await topology.stop();
    }
  }, 90_000);

  it('cluster: the slot master dies and its lagging replica takes over', async () => {
    const topology: Topology = await startCluster({ masters: 3, replicasPerMaster: 1 });
    try {
      const name = 'loss:cluster';
      const slot = Number(await withClient(topology.servers[0]!, (redis) => redis.call('CLUSTER', 'KEYSLOT', `lock:{${name}}`)));
      // The cluster answers before each replica has announced itself: wait for the slot master's.
      await waitUntil(async () => (await clusterMasterOf(topology, slot)).replicas.length > 0, "the slot master's replica to be known");
      const { master, replicas } = await clusterMasterOf(topology, slot);
      const replica = replicas[0]!;
      await failOverToLaggingReplica(topology.env, name, master, replica, async () => {
        await withClient(replica, (redis) => redis.call('CLUSTER', 'FAILOVER', 'TAKEOVER'));
        await waitUntil(async () => (await clusterMasterOf(topology, slot)).master.port === replica.port, 'the replica to own the slot', 30_000);
      });
    } finally {
      await closeClients();
      await topology.stop();
    }
  }, 90_000);
});
