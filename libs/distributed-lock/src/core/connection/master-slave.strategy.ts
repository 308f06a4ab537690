import type { RedisOptions } from 'ioredis';
import { loadIoredis } from '../redis/load-ioredis.js';
import { formatHostPort, type MasterSlaveConnectionConfig } from '../config/connection-config.js';
import type { ConnectionStrategy, NodeConnections } from './connection-strategy.js';
import type { RedisClient } from '../config/redis-client.js';
import { baseRedisOptions } from './redis-options.js';

/**
 * A fixed master with replicas (no automatic failover). Lock state lives only on the master: every
 * script and every read that decides ownership goes there. Replicas answer only reads that are stale
 * by design (isLocked, remainTimeToLive: the answer may change the moment it is given anyway), and
 * they back replica acknowledgement (`WAIT` on the master) when it is configured.
 */
export class MasterSlaveConnectionStrategy implements ConnectionStrategy {
  readonly mode = 'master-slave' as const;
  readonly shardedPubSub = false;
  readonly target: string;

  constructor(private readonly config: MasterSlaveConnectionConfig) {
    this.target =
      `master-slave master ${formatHostPort(config.master)}` + (config.replicas.length ? `, replicas ${config.replicas.map(formatHostPort).join(',')}` : '');
  }

  createNodes(): NodeConnections[] {
    const command = new (loadIoredis().Redis)(this.options(this.config.master));
    return [{ command, subscriber: command.duplicate(), target: this.target }];
  }

  /** Read-only connections to the replicas (stale by the replication lag, so never used for ownership). */
  createReplicaReaders(): RedisClient[] {
    return this.config.replicas.map((replica) => new (loadIoredis().Redis)({ ...this.options(replica), readOnly: true }));
  }

  private options(node: { host: string; port: number }): RedisOptions {
    const options: RedisOptions = { ...baseRedisOptions(this.config), host: node.host, port: node.port };
    if (this.config.db !== undefined) options.db = this.config.db;
    return options;
  }
}
