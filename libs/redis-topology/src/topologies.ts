import { Redis } from 'ioredis';
import { RedisServer, type RedisServerOptions } from './redis-server.js';

export type TopologyMode = 'single' | 'master-slave' | 'sentinel' | 'cluster' | 'redlock';

/** Settings of every server of a topology: which redis-server binary runs them (see RedisServerOptions.bin). */
export type ServerSettings = Pick<RedisServerOptions, 'bin'>;

/**
 * A set of redis-server processes on loopback ports, and the environment variables that point the
 * library (and the inventory app) at them: the same variables a deployment would set.
 */
export interface Topology {
  readonly mode: TopologyMode;
  /** DISTRIBUTED_LOCK_REDIS_MODE and the mode's address variables. */
  readonly env: Record<string, string>;
  /** Data servers (masters first), sentinels excluded. */
  readonly servers: RedisServer[];
  readonly sentinels: RedisServer[];
  stop(): Promise<void>;
}

const address = (server: RedisServer): string => `${server.host}:${server.port}`;

/**
 * Re-runs `probe` with a growing pause until it is true: for cluster and replication state that has no
 * event. A timeout names the probe's last error, if it threw, and what `explain` says of the state then.
 */
export async function waitUntil(probe: () => Promise<boolean>, what: string, timeoutMs = 30_000, explain?: () => Promise<string>): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let lastError: unknown;
  for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
    const done = await probe().catch((error: unknown) => {
      lastError = error;
      return false;
    });
    if (done) return;
    if (performance.now() > deadline) {
      const state = explain ? await explain().catch((error: unknown) => `(could not read the state: ${(error as Error).message})`) : '';
      const thrown = lastError ? `; the last probe failed: ${(lastError as Error).message}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${thrown}${state ? `; state: ${state}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

function info(text: string, field: string): string | undefined {
  return new RegExp(`^${field}:(.*)$`, 'm').exec(text)?.[1]?.trim();
}

/** Runs `fn` with a short-lived plain client of `server`. */
export async function withClient<T>(server: RedisServer, fn: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({ host: server.host, port: server.port, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await fn(client);
  } finally {
    client.disconnect();
  }
}

async function stopAll(servers: RedisServer[]): Promise<void> {
  await Promise.all(
    servers.map(async (server) => {
      await server.stop();
      server.cleanup();
    }),
  );
}

async function replicaLinkUp(replica: RedisServer): Promise<boolean> {
  return withClient(replica, async (client) => info(await client.info('replication'), 'master_link_status') === 'up');
}

export async function startSingle(settings: ServerSettings = {}): Promise<Topology> {
  const server = await RedisServer.start({ ...settings });
  return {
    mode: 'single',
    env: { DISTRIBUTED_LOCK_REDIS_MODE: 'single', DISTRIBUTED_LOCK_REDIS_HOST: server.host, DISTRIBUTED_LOCK_REDIS_PORT: String(server.port) },
    servers: [server],
    sentinels: [],
    stop: () => stopAll([server]),
  };
}

/** A master and `replicas` replicas (asynchronous replication), linked and in sync. */
export async function startMasterReplicas(replicas = 2, settings: ServerSettings = {}): Promise<Topology> {
  const master = await RedisServer.start({ ...settings });
  const started: RedisServer[] = [master];
  try {
    for (let i = 0; i < replicas; i++) {
      started.push(await RedisServer.start({ ...settings, args: ['--replicaof', master.host, String(master.port)] }));
    }
    await Promise.all(started.slice(1).map((replica) => waitUntil(() => replicaLinkUp(replica), `replica ${replica.port} to sync`)));
  } catch (error) {
    await stopAll(started);
    throw error;
  }
  return {
    mode: 'master-slave',
    env: {
      DISTRIBUTED_LOCK_REDIS_MODE: 'master-slave',
      DISTRIBUTED_LOCK_REDIS_MASTER: address(master),
      DISTRIBUTED_LOCK_REDIS_REPLICAS: started.slice(1).map(address).join(','),
    },
    servers: started,
    sentinels: [],
    stop: () => stopAll(started),
  };
}

export interface SentinelOptions extends ServerSettings {
  replicas?: number;
  sentinels?: number;
  masterName?: string;
  /** Sentinel's down-after-milliseconds: how long a silent master takes to be declared down. */
  downAfterMs?: number;
}

/** A master with replicas, watched by sentinels that know each other and the replicas. */
export async function startSentinelTopology(options: SentinelOptions = {}): Promise<Topology & { masterName: string }> {
  const masterName = options.masterName ?? 'mymaster';
  const data = await startMasterReplicas(options.replicas ?? 2, { bin: options.bin });
  const master = data.servers[0]!;
  const sentinels: RedisServer[] = [];
  try {
    const quorum = Math.floor((options.sentinels ?? 3) / 2) + 1;
    for (let i = 0; i < (options.sentinels ?? 3); i++) {
      sentinels.push(
        await RedisServer.start({
          bin: options.bin,
          sentinel: true,
          args: [
            ...['--sentinel', 'monitor', masterName, master.host, String(master.port), String(quorum)],
            ...['--sentinel', 'down-after-milliseconds', masterName, String(options.downAfterMs ?? 1000)],
            ...['--sentinel', 'failover-timeout', masterName, '5000'],
            ...['--sentinel', 'parallel-syncs', masterName, '2'],
          ],
        }),
      );
    }
    const expected = sentinels.length - 1;
    await Promise.all(
      sentinels.map((sentinel) =>
        waitUntil(
          () =>
            withClient(sentinel, async (client) => {
              const fields = (await client.call('SENTINEL', 'MASTER', masterName)) as string[];
              const get = (name: string): number => Number(fields[fields.indexOf(name) + 1]);
              return get('num-other-sentinels') >= expected && get('num-slaves') >= data.servers.length - 1;
            }),
          `sentinel ${sentinel.port} to discover the other sentinels and the replicas`,
        ),
      ),
    );
  } catch (error) {
    await stopAll([...sentinels, ...data.servers]);
    throw error;
  }
  return {
    mode: 'sentinel',
    masterName,
    env: {
      DISTRIBUTED_LOCK_REDIS_MODE: 'sentinel',
      DISTRIBUTED_LOCK_REDIS_SENTINELS: sentinels.map(address).join(','),
      DISTRIBUTED_LOCK_REDIS_SENTINEL_MASTER: masterName,
    },
    servers: data.servers,
    sentinels,
    stop: () => stopAll([...sentinels, ...data.servers]),
  };
}

/** The address of the master the sentinels currently announce. */
export async function currentSentinelMaster(topology: Topology & { masterName: string }): Promise<string> {
  return withClient(topology.sentinels[0]!, async (client) => {
    const [host, port] = (await client.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', topology.masterName)) as [string, string];
    return `${host}:${port}`;
  });
}

export interface ClusterOptions extends ServerSettings {
  masters?: number;
  replicasPerMaster?: number;
  /** cluster-node-timeout: how long a silent node takes to be considered failing. */
  nodeTimeoutMs?: number;
  /** More redis-server arguments for every node (e.g. `--cluster-require-full-coverage no`). */
  args?: string[];
}

const SLOTS = 16384;

/** A Redis Cluster formed from scratch: masters own equal slot ranges, each with its replicas. */
export async function startCluster(options: ClusterOptions = {}): Promise<Topology & { masters: RedisServer[]; replicas: RedisServer[] }> {
  const masterCount = options.masters ?? 3;
  const perMaster = options.replicasPerMaster ?? 1;
  const args = [
    ...['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', String(options.nodeTimeoutMs ?? 2000)],
    // A master sends a replica the dataset without a disk copy (the default since Redis 7) only after
    // waiting repl-diskless-sync-delay (5 s) for more replicas to ask; here they all ask together at
    // formation, so the wait only held up every cluster start by 5 s.
    ...['--repl-diskless-sync-delay', '0'],
    ...(options.args ?? []),
  ];
  const servers: RedisServer[] = [];
  try {
    for (let i = 0; i < masterCount * (1 + perMaster); i++) servers.push(await RedisServer.start({ bin: options.bin, args }));
    const masters = servers.slice(0, masterCount);
    const replicas = servers.slice(masterCount);
    const ids = await Promise.all(servers.map((server) => withClient(server, async (client) => (await client.call('CLUSTER', 'MYID')) as string)));

    await Promise.all(
      masters.map((server, i) =>
        withClient(server, (client) => {
          const first = Math.floor((i * SLOTS) / masterCount);
          const last = Math.floor(((i + 1) * SLOTS) / masterCount) - 1;
          // ADDSLOTS rather than ADDSLOTSRANGE (Redis 7+), so that Redis 6 clusters form the same way.
          const slots = Array.from({ length: last - first + 1 }, (_, k) => String(first + k));
          return client.call('CLUSTER', 'ADDSLOTS', ...slots);
        }),
      ),
    );
    await Promise.all(
      servers.slice(1).map((server) => withClient(server, (client) => client.call('CLUSTER', 'MEET', servers[0]!.host, String(servers[0]!.port)))),
    );
    await Promise.all(
      servers.map((server) =>
        waitUntil(
          () => withClient(server, async (client) => Number(info((await client.call('CLUSTER', 'INFO')) as string, 'cluster_known_nodes')) === servers.length),
          `node ${server.port} to know all ${servers.length} nodes`,
        ),
      ),
    );
    await Promise.all(replicas.map((server, i) => withClient(server, (client) => client.call('CLUSTER', 'REPLICATE', ids[i % masterCount]!))));
    await Promise.all([
      ...servers.map((server) =>
        waitUntil(
          () => withClient(server, async (client) => info((await client.call('CLUSTER', 'INFO')) as string, 'cluster_state') === 'ok'),
          `node ${server.port} to report cluster_state:ok`,
        ),
      ),
      ...replicas.map((replica) => waitUntil(() => replicaLinkUp(replica), `cluster replica ${replica.port} to sync`)),
    ]);
    return {
      mode: 'cluster',
      env: { DISTRIBUTED_LOCK_REDIS_MODE: 'cluster', DISTRIBUTED_LOCK_REDIS_NODES: masters.map(address).join(',') },
      servers,
      masters,
      replicas,
      sentinels: [],
      stop: () => stopAll(servers),
    };
  } catch (error) {
    await stopAll(servers);
    throw error;
  }
}

/** The node currently serving `slot` as master, read from a node that answers. */
export async function clusterMasterOf(topology: Topology, slot: number): Promise<{ master: RedisServer; replicas: RedisServer[] }> {
  for (const server of topology.servers.filter((s) => s.isRunning)) {
    const layout = await withClient(server, (client) => client.call('CLUSTER', 'SHARDS') as Promise<unknown[]>).catch(() => undefined);
    if (!layout) continue;
    for (const shard of layout as unknown[][]) {
      const fields = toRecord(shard);
      const ranges = fields.slots as number[];
      let owns = false;
      for (let i = 0; i < ranges.length; i += 2) if (slot >= Number(ranges[i]) && slot <= Number(ranges[i + 1])) owns = true;
      if (!owns) continue;
      const nodes = (fields.nodes as unknown[][]).map(toRecord);
      const byPort = (port: unknown): RedisServer | undefined => topology.servers.find((s) => s.port === Number(port));
      const master = nodes.find((node) => node.role === 'master' && node.health === 'online');
      if (!master) continue;
      return {
        master: byPort(master.port)!,
        replicas: nodes
          .filter((node) => node.role === 'replica')
          .map((node) => byPort(node.port)!)
          .filter(Boolean),
      };
    }
  }
  throw new Error(`no node owns slot ${slot}`);
}

function toRecord(list: unknown[]): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (let i = 0; i < list.length; i += 2) record[String(list[i])] = list[i + 1];
  return record;
}

/** Independent masters (no replication between them), for RedLock. */
export async function startIndependentNodes(count = 3, settings: ServerSettings = {}): Promise<Topology> {
  const servers: RedisServer[] = [];
  try {
    for (let i = 0; i < count; i++) servers.push(await RedisServer.start({ ...settings }));
  } catch (error) {
    await stopAll(servers);
    throw error;
  }
  return {
    mode: 'redlock',
    env: { DISTRIBUTED_LOCK_REDIS_MODE: 'redlock', DISTRIBUTED_LOCK_REDIS_NODES: servers.map(address).join(',') },
    servers,
    sentinels: [],
    stop: () => stopAll(servers),
  };
}

export async function startTopology(mode: TopologyMode, settings: ServerSettings = {}): Promise<Topology> {
  switch (mode) {
    case 'single':
      return startSingle(settings);
    case 'master-slave':
      return startMasterReplicas(2, settings);
    case 'sentinel':
      return startSentinelTopology(settings);
    case 'cluster':
      return startCluster(settings);
    case 'redlock':
      return startIndependentNodes(3, settings);
  }
}
