import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import type { ClusterOptions, NatMap, RedisOptions } from 'ioredis';

export const REDIS_MODES = ['single', 'cluster', 'master-slave', 'sentinel', 'redlock'] as const;
export type RedisMode = (typeof REDIS_MODES)[number];

export interface HostPort {
  host: string;
  port: number;
}

/** Settings shared by every mode. */
export interface CommonConnectionConfig {
  username?: string;
  password?: string;
  /** `true` for TLS with the system's CAs, or Node TLS options (ca, cert, key, servername...). */
  tls?: boolean | TlsConnectionOptions;
  /** Extra ioredis options, merged over ours (for each node connection). */
  redisOptions?: RedisOptions;
}

export interface SingleConnectionConfig extends CommonConnectionConfig {
  mode: 'single';
  /** `redis://[user:password@]host:port[/db]` or `rediss://...` for TLS. Exclusive with host/port. */
  url?: string;
  host?: string;
  port?: number;
  db?: number;
}

export interface ClusterConnectionConfig extends CommonConnectionConfig {
  mode: 'cluster';
  /** Seed nodes; the rest of the cluster is discovered. */
  nodes: HostPort[];
  /** Address translation for clusters behind NAT or in containers (ioredis `natMap`). */
  natMap?: NatMap;
  clusterOptions?: ClusterOptions;
}

export interface MasterSlaveConnectionConfig extends CommonConnectionConfig {
  mode: 'master-slave';
  /** All writes and lock scripts go here. */
  master: HostPort;
  /** Replicas of the master; used for replica acknowledgement (WAIT), never for lock state. */
  replicas: HostPort[];
  db?: number;
}

export interface SentinelConnectionConfig extends CommonConnectionConfig {
  mode: 'sentinel';
  sentinels: HostPort[];
  /** The name the sentinels monitor the master under (`sentinel monitor <name> ...`). */
  masterName: string;
  sentinelUsername?: string;
  sentinelPassword?: string;
  db?: number;
}

export interface RedlockConnectionConfig extends CommonConnectionConfig {
  mode: 'redlock';
  /** Independent masters (not replicas of each other); a lock needs a majority of them. Use an odd number, 3 or 5. */
  nodes: HostPort[];
  db?: number;
}

export type ConnectionConfig =
  SingleConnectionConfig | ClusterConnectionConfig | MasterSlaveConnectionConfig | SentinelConnectionConfig | RedlockConnectionConfig;

export function formatHostPort({ host, port }: HostPort): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
