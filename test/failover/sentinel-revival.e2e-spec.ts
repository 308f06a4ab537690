import { Redis } from 'ioredis';
import { LockClient } from 'nestjs-distributed-lock';
import { startSentinelTopology, type Topology } from 'redis-topology';
import { nextEvent } from '../harness/wait.js';

/** What this test reaches inside ioredis: the sentinel connector of a connection and its stream. */
interface SentinelInternals {
  connector: { resolve(endpoint: unknown): Promise<unknown>; disconnect(): void };
  stream: { destroy(): void };
}

/**
 * ioredis ends a sentinel-mode connection for good when its failover detector disconnects it (on a
 * sentinel's `+switch-master`) while a reconnect is asking a sentinel for the master: status `end`,
 * every command "Connection is closed.", never a reconnect. Under load, in a failover, that happened
 * (a worker failed every lock call for the rest of the test). The lock client connects again what
 * ioredis gave up. Here the race is made certain: the connection drops, and the detector's disconnect
 * comes right after the reconnect's first answer from a sentinel.
 */
function endDuringReconnect(connection: Redis): void {
  const internals = connection as unknown as SentinelInternals;
  const resolve = internals.connector.resolve.bind(internals.connector);
  let done = false;
  internals.connector.resolve = async (endpoint: unknown) => {
    const address = await resolve(endpoint);
    if (!done) {
      done = true;
      internals.connector.disconnect();
    }
    return address;
  };
  internals.stream.destroy(); // the connection drops, as when the master is killed
}

describe('sentinel: a connection ioredis gives up during a failover is connected again', () => {
  let topology: Topology & { masterName: string };
  beforeAll(async () => {
    topology = await startSentinelTopology({ replicas: 1, sentinels: 1 });
  }, 60_000);
  afterAll(async () => {
    await topology?.stop();
  });

  it('the lock client takes locks again; control: a bare ioredis connection stays ended', async () => {
    const client = await LockClient.connect({ env: topology.env });
    try {
      const command = client.redis as Redis;
      const ended = nextEvent(command, 'end');
      const readyAgain = ended.then(() => nextEvent(command, 'ready'));
      endDuringReconnect(command);
      await ended; // ioredis gave it up...
      await readyAgain; // ...and it is connected again
      const handle = await client.lock('revival', { waitTime: '5s' });
      await handle.unlock();
    } finally {
      await client.close();
    }

    const [host, port] = topology.env.DISTRIBUTED_LOCK_REDIS_SENTINELS!.split(',')[0]!.split(':');
    const bare = new Redis({ sentinels: [{ host, port: Number(port) }], name: topology.masterName, role: 'master', failoverDetector: true, lazyConnect: true });
    bare.on('error', () => undefined);
    try {
      await bare.connect();
      const ended = nextEvent(bare, 'end');
      endDuringReconnect(bare);
      await ended;
      expect(bare.status).toBe('end'); // ioredis does not reconnect from 'end'
      await expect(bare.ping()).rejects.toThrow('Connection is closed');
    } finally {
      bare.disconnect();
    }
  }, 30_000);
});
