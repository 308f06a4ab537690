import { NodeRedisSubscriber, MASTER_CHANGED } from './node-redis-subscriber.js';
import { DEFAULT_REPLY_TYPES, NodeRedisPort, type NodeRedisEvent } from './node-redis.port.js';
import type { NodeRedisClientLike, NodeRedisClusterLike, NodeRedisSentinelLike } from './node-redis.types.js';
import type { ConnectionEvent, PubSubPort, RedisCommands } from './redis-port.js';

/** A node-redis client (`createClient`): one connection, to one server. */
export class NodeRedisClientPort extends NodeRedisPort {
  readonly isCluster = false;

  constructor(
    private readonly client: NodeRedisClientLike,
    description = 'node-redis client',
  ) {
    super(description, client, false);
  }

  get native(): object {
    return this.client;
  }

  protected send(_key: string | undefined, args: readonly string[]): Promise<unknown> {
    return this.client.sendCommand(args, DEFAULT_REPLY_TYPES);
  }

  async masters(): Promise<readonly RedisCommands[]> {
    return [this];
  }

  subscriber(): PubSubPort {
    return new NodeRedisSubscriber({ kind: 'client', connection: this.client.duplicate() });
  }

  protected eventOf(event: ConnectionEvent): NodeRedisEvent {
    return { name: event };
  }
}

/**
 * A node-redis cluster (`createCluster`): every command is routed by its first key (a script's first
 * key carries the lock's hash tag), keyless ones go to any node; SCAN and health checks visit each
 * master's own client. A new node's client becoming ready (after a failover or a resharding) is what
 * counts as "ready again".
 */
export class NodeRedisClusterPort extends NodeRedisPort {
  readonly isCluster = true;

  constructor(private readonly cluster: NodeRedisClusterLike) {
    super('node-redis cluster', cluster, false);
  }

  get native(): object {
    return this.cluster;
  }

  protected send(key: string | undefined, args: readonly string[]): Promise<unknown> {
    return this.cluster.sendCommand(key, false, args, DEFAULT_REPLY_TYPES);
  }

  async masters(): Promise<readonly RedisCommands[]> {
    const clients = await Promise.all(this.cluster.masters.map((master) => this.cluster.nodeClient(master)));
    return clients.map((client) => new NodeRedisClientPort(client, 'node-redis cluster node'));
  }

  subscriber(): PubSubPort {
    return new NodeRedisSubscriber({ kind: 'cluster', connection: this.cluster.duplicate({ minimizeConnections: true }) });
  }

  protected eventOf(event: ConnectionEvent): NodeRedisEvent {
    return { name: event === 'ready' ? 'node-ready' : event === 'end' ? 'disconnect' : 'error' };
  }
}

/** A node-redis sentinel (`createSentinel`): commands go to the current master; a change of master counts as "ready again". */
export class NodeRedisSentinelPort extends NodeRedisPort {
  readonly isCluster = false;

  constructor(private readonly sentinel: NodeRedisSentinelLike) {
    super('node-redis sentinel', sentinel, false);
  }

  get native(): object {
    return this.sentinel;
  }

  protected send(_key: string | undefined, args: readonly string[]): Promise<unknown> {
    return this.sentinel.sendCommand(false, args, DEFAULT_REPLY_TYPES);
  }

  async masters(): Promise<readonly RedisCommands[]> {
    return [this];
  }

  subscriber(): PubSubPort {
    return new NodeRedisSubscriber({ kind: 'sentinel', connection: this.sentinel });
  }

  protected eventOf(event: ConnectionEvent): NodeRedisEvent | undefined {
    if (event === 'ready') return MASTER_CHANGED;
    return event === 'error' ? { name: 'error' } : undefined;
  }
}
