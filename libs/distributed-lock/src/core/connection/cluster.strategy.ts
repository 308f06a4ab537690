import type { ClusterOptions } from 'ioredis';
import { loadIoredis } from '../redis/load-ioredis.js';
import { formatHostPort, type ClusterConnectionConfig } from '../config/connection-config.js';
import type { ConnectionStrategy, NodeConnections } from './connection-strategy.js';
import { baseRedisOptions } from './redis-options.js';

/**
 * Redis Cluster. Every key of one lock carries the `{name}` hash tag, so a lock's scripts always run
 * in one slot; unlock notifications use sharded pub/sub, so they reach only the shard of that slot,
 * or plain pub/sub on clusters without it (Redis 6, KeyDB: see PubSubSelector).
 */
export class ClusterConnectionStrategy implements ConnectionStrategy {
  readonly mode = 'cluster' as const;
  readonly shardedPubSub = true;
  readonly target: string;

  constructor(private readonly config: ClusterConnectionConfig) {
    this.target = `cluster ${config.nodes.map(formatHostPort).join(',')}`;
  }

  createNodes(): NodeConnections[] {
    const { Cluster } = loadIoredis();
    return [
      {
        command: new Cluster(this.config.nodes, this.clusterOptions()),
        // One subscriber connection per master; SSUBSCRIBE is routed to the master of the channel's slot.
        // The same client does plain SUBSCRIBE too (on one node), for clusters without sharded pub/sub.
        subscriber: new Cluster(this.config.nodes, { ...this.clusterOptions(), shardedSubscribers: true }),
        target: this.target,
      },
    ];
  }

  private clusterOptions(): ClusterOptions {
    const { lazyConnect, enableAutoPipelining, maxRetriesPerRequest, ...redisOptions } = baseRedisOptions(this.config);
    const options: ClusterOptions = {
      lazyConnect,
      enableAutoPipelining,
      maxRedirections: 16,
      retryDelayOnTryAgain: 100,
      retryDelayOnFailover: 100,
      redisOptions: { ...redisOptions, maxRetriesPerRequest },
      ...this.config.clusterOptions,
    };
    if (this.config.natMap) options.natMap = this.config.natMap;
    return options;
  }
}
