import type { RedisOptions } from 'ioredis';
import { loadIoredis } from '../redis/load-ioredis.js';
import { formatHostPort, type SentinelConnectionConfig } from '../config/connection-config.js';
import type { ConnectionStrategy, NodeConnections } from './connection-strategy.js';
import { baseRedisOptions } from './redis-options.js';

/**
 * Master found through Redis Sentinel. Both connections follow a failover: ioredis asks the sentinels
 * for the current master on every reconnect, and `failoverDetector` drops the connection as soon as a
 * sentinel announces `+switch-master`.
 */
export class SentinelConnectionStrategy implements ConnectionStrategy {
  readonly mode = 'sentinel' as const;
  readonly shardedPubSub = false;
  readonly target: string;

  constructor(private readonly config: SentinelConnectionConfig) {
    this.target = `sentinel master "${config.masterName}" via ${config.sentinels.map(formatHostPort).join(',')}`;
  }

  createNodes(): NodeConnections[] {
    const { Redis } = loadIoredis();
    return [{ command: new Redis(this.options()), subscriber: new Redis(this.options()), target: this.target }];
  }

  private options(): RedisOptions {
    const options: RedisOptions = {
      ...baseRedisOptions(this.config),
      sentinels: this.config.sentinels,
      name: this.config.masterName,
      role: 'master',
      failoverDetector: true,
    };
    if (this.config.db !== undefined) options.db = this.config.db;
    if (this.config.sentinelUsername !== undefined) options.sentinelUsername = this.config.sentinelUsername;
    if (this.config.sentinelPassword !== undefined) options.sentinelPassword = this.config.sentinelPassword;
    if (this.config.tls) {
      options.enableTLSForSentinelMode = true;
      options.sentinelTLS = options.tls;
    }
    return options;
  }
}
