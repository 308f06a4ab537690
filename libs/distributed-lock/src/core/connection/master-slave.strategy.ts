import { Redis, type RedisOptions } from 'ioredis';
import { formatHostPort, type MasterSlaveConnectionConfig } from './connection-config.js';
import type { ConnectionStrategy, RedisClient } from './connection-strategy.js';
import { baseRedisOptions } from './redis-options.js';

/**
 * A fixed master with replicas (no automatic failover). Lock state lives only on the master: every
 * script and every read that decides ownership goes there. The replicas serve replica acknowledgement
 * (`WAIT`), which the client asks the master for after acquire and renew when configured.
 */
export class MasterSlaveConnectionStrategy implements ConnectionStrategy {
  readonly mode = 'master-slave' as const;
  readonly shardedPubSub = false;
  readonly target: string;

  constructor(private readonly config: MasterSlaveConnectionConfig) {
    this.target =
      `master-slave master ${formatHostPort(config.master)}` +
      (config.replicas.length ? `, replicas ${config.replicas.map(formatHostPort).join(',')}` : '');
  }

  createCommandClient(): RedisClient {
    const options: RedisOptions = { ...baseRedisOptions(this.config), ...this.config.master };
    if (this.config.db !== undefined) options.db = this.config.db;
    return new Redis(options);
  }

  createSubscriberClient(command: RedisClient): RedisClient {
    return (command as Redis).duplicate();
  }
}
