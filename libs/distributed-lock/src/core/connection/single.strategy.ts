import type { Redis, RedisOptions } from 'ioredis';
import { loadIoredis } from '../redis/load-ioredis.js';
import type { SingleConnectionConfig } from '../config/connection-config.js';
import type { ConnectionStrategy, NodeConnections } from './connection-strategy.js';
import { baseRedisOptions } from './redis-options.js';

/** One Redis server. */
export class SingleConnectionStrategy implements ConnectionStrategy {
  readonly mode = 'single' as const;
  readonly shardedPubSub = false;
  readonly target: string;

  constructor(private readonly config: SingleConnectionConfig) {
    this.target = config.url ? `single ${redactUrl(config.url)}` : `single ${config.host ?? '127.0.0.1'}:${config.port ?? 6379}`;
  }

  createNodes(): NodeConnections[] {
    const command = this.createCommandClient();
    return [{ command, subscriber: command.duplicate(), target: this.target }];
  }

  private createCommandClient(): Redis {
    const options: RedisOptions = baseRedisOptions(this.config);
    if (this.config.db !== undefined) options.db = this.config.db;
    if (this.config.url) {
      // Options given explicitly win over the URL's parts, as in ioredis.
      return new (loadIoredis().Redis)(this.config.url, options);
    }
    return new (loadIoredis().Redis)({ host: this.config.host ?? '127.0.0.1', port: this.config.port ?? 6379, ...options });
  }
}

/** The URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '<unparseable DISTRIBUTED_LOCK_REDIS_URL>';
  }
}
