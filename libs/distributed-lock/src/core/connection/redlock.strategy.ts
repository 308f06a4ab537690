import type { RedisOptions } from 'ioredis';
import { loadIoredis } from '../redis/load-ioredis.js';
import { formatHostPort, type RedlockConnectionConfig } from '../config/connection-config.js';
import type { ConnectionStrategy, NodeConnections } from './connection-strategy.js';
import { baseRedisOptions } from './redis-options.js';

/**
 * RedLock: N independent Redis masters. Each lock is taken on every node in parallel and held when a
 * majority granted it within its validity, so one node's crash or failover cannot hand it to someone
 * else on its own. Each node gets its own command and subscriber connection.
 */
export class RedlockConnectionStrategy implements ConnectionStrategy {
  readonly mode = 'redlock' as const;
  readonly shardedPubSub = false;
  readonly target: string;

  constructor(private readonly config: RedlockConnectionConfig) {
    this.target = `redlock over ${config.nodes.map(formatHostPort).join(',')}`;
  }

  createNodes(): NodeConnections[] {
    return this.config.nodes.map((node) => {
      const options: RedisOptions = {
        ...baseRedisOptions(this.config),
        host: node.host,
        port: node.port,
        // A dead node must not hold up the others: fail its commands at once instead of queueing them.
        enableOfflineQueue: false,
        ...this.config.redisOptions,
      };
      if (this.config.db !== undefined) options.db = this.config.db;
      const command = new (loadIoredis().Redis)(options);
      return { command, subscriber: command.duplicate({ enableOfflineQueue: true }), target: `redlock node ${formatHostPort(node)}` };
    });
  }
}
