import { readFileSync } from 'node:fs';
import { InvalidLockConfigError } from '../errors/invalid-lock-config.error.js';
import {
  REDIS_MODES,
  type CommonConnectionConfig,
  type ConnectionConfig,
  type MasterSlaveConnectionConfig,
  type RedisMode,
  type RedlockConnectionConfig,
  type SentinelConnectionConfig,
  type SingleConnectionConfig,
} from './connection-config.js';
import { parseBoolean, parseDb, parseHostPort, parseHostPortList, parseNatMap, parsePort } from './env-parsers.js';

export type Environment = Record<string, string | undefined>;

/** Every environment variable the library reads, for documentation and for tests that check it. */
export const LOCK_ENV_VARIABLES = [
  'DISTRIBUTED_LOCK_REDIS_MODE',
  'DISTRIBUTED_LOCK_REDIS_URL',
  'DISTRIBUTED_LOCK_REDIS_HOST',
  'DISTRIBUTED_LOCK_REDIS_PORT',
  'DISTRIBUTED_LOCK_REDIS_DB',
  'DISTRIBUTED_LOCK_REDIS_NODES',
  'DISTRIBUTED_LOCK_REDIS_NAT_MAP',
  'DISTRIBUTED_LOCK_REDIS_MASTER',
  'DISTRIBUTED_LOCK_REDIS_REPLICAS',
  'DISTRIBUTED_LOCK_REDIS_SENTINELS',
  'DISTRIBUTED_LOCK_REDIS_SENTINEL_MASTER',
  'DISTRIBUTED_LOCK_REDIS_SENTINEL_USERNAME',
  'DISTRIBUTED_LOCK_REDIS_SENTINEL_PASSWORD',
  'DISTRIBUTED_LOCK_REDIS_USERNAME',
  'DISTRIBUTED_LOCK_REDIS_PASSWORD',
  'DISTRIBUTED_LOCK_REDIS_TLS',
  'DISTRIBUTED_LOCK_REDIS_TLS_CA_FILE',
  'DISTRIBUTED_LOCK_KEY_PREFIX',
  'DISTRIBUTED_LOCK_ONE_SLOT_PER_SCRIPT',
  'DISTRIBUTED_LOCK_WATCHDOG_TIMEOUT',
  'DISTRIBUTED_LOCK_WAIT_TIME',
  'DISTRIBUTED_LOCK_SHUTDOWN_TIMEOUT',
  'DISTRIBUTED_LOCK_REPLICA_ACK',
  'DISTRIBUTED_LOCK_REPLICA_ACK_TIMEOUT',
  'DISTRIBUTED_LOCK_INSTANCE_NAME',
] as const;

function read(env: Environment, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function required(env: Environment, name: string, mode: RedisMode, form: string): string {
  const value = read(env, name);
  if (value === undefined) {
    throw new InvalidLockConfigError(name, `DISTRIBUTED_LOCK_REDIS_MODE=${mode} needs ${name} (${form}).`);
  }
  return value;
}

/** Connection settings from `DISTRIBUTED_LOCK_REDIS_*` variables. Throws InvalidLockConfigError naming the variable. */
export function readConnectionConfigFromEnv(env: Environment): ConnectionConfig {
  const rawMode = (read(env, 'DISTRIBUTED_LOCK_REDIS_MODE') ?? 'single').toLowerCase();
  if (!(REDIS_MODES as readonly string[]).includes(rawMode)) {
    throw new InvalidLockConfigError('DISTRIBUTED_LOCK_REDIS_MODE', `"${rawMode}" is not a deployment mode; use one of ${REDIS_MODES.join(', ')}.`);
  }
  const mode = rawMode as RedisMode;
  const common = readCommon(env);
  const dbText = read(env, 'DISTRIBUTED_LOCK_REDIS_DB');
  const db = dbText === undefined ? undefined : parseDb(dbText, 'DISTRIBUTED_LOCK_REDIS_DB');

  switch (mode) {
    case 'single': {
      const url = read(env, 'DISTRIBUTED_LOCK_REDIS_URL');
      const host = read(env, 'DISTRIBUTED_LOCK_REDIS_HOST');
      const port = read(env, 'DISTRIBUTED_LOCK_REDIS_PORT');
      if (url !== undefined) {
        if (host !== undefined || port !== undefined) {
          throw new InvalidLockConfigError(
            'DISTRIBUTED_LOCK_REDIS_URL',
            'set either DISTRIBUTED_LOCK_REDIS_URL or DISTRIBUTED_LOCK_REDIS_HOST/DISTRIBUTED_LOCK_REDIS_PORT, not both.',
          );
        }
        if (!/^rediss?:\/\//.test(url)) {
          throw new InvalidLockConfigError('DISTRIBUTED_LOCK_REDIS_URL', `"${url}" must start with redis:// or rediss:// (TLS).`);
        }
        return withDb<SingleConnectionConfig>({ mode, url, ...common }, db);
      }
      return withDb<SingleConnectionConfig>(
        { mode, host: host ?? '127.0.0.1', port: port === undefined ? 6379 : parsePort(port, 'DISTRIBUTED_LOCK_REDIS_PORT'), ...common },
        db,
      );
    }
    case 'cluster': {
      if (db !== undefined && db !== 0) {
        throw new InvalidLockConfigError('DISTRIBUTED_LOCK_REDIS_DB', 'Redis Cluster has only database 0; unset DISTRIBUTED_LOCK_REDIS_DB.');
      }
      const nodes = parseHostPortList(
        required(env, 'DISTRIBUTED_LOCK_REDIS_NODES', mode, 'comma-separated host:port of cluster nodes'),
        'DISTRIBUTED_LOCK_REDIS_NODES',
      );
      const natText = read(env, 'DISTRIBUTED_LOCK_REDIS_NAT_MAP');
      return natText === undefined ? { mode, nodes, ...common } : { mode, nodes, natMap: parseNatMap(natText, 'DISTRIBUTED_LOCK_REDIS_NAT_MAP'), ...common };
    }
    case 'master-slave': {
      const master = parseHostPort(required(env, 'DISTRIBUTED_LOCK_REDIS_MASTER', mode, 'host:port of the master'), 'DISTRIBUTED_LOCK_REDIS_MASTER');
      const replicasText = read(env, 'DISTRIBUTED_LOCK_REDIS_REPLICAS');
      const replicas = replicasText === undefined ? [] : parseHostPortList(replicasText, 'DISTRIBUTED_LOCK_REDIS_REPLICAS');
      return withDb<MasterSlaveConnectionConfig>({ mode, master, replicas, ...common }, db);
    }
    case 'sentinel': {
      const sentinels = parseHostPortList(
        required(env, 'DISTRIBUTED_LOCK_REDIS_SENTINELS', mode, 'comma-separated host:port of sentinels'),
        'DISTRIBUTED_LOCK_REDIS_SENTINELS',
      );
      const masterName = required(env, 'DISTRIBUTED_LOCK_REDIS_SENTINEL_MASTER', mode, 'the master name the sentinels monitor, e.g. mymaster');
      const config: SentinelConnectionConfig = { mode, sentinels, masterName, ...common };
      const sentinelUsername = read(env, 'DISTRIBUTED_LOCK_REDIS_SENTINEL_USERNAME');
      const sentinelPassword = read(env, 'DISTRIBUTED_LOCK_REDIS_SENTINEL_PASSWORD');
      if (sentinelUsername !== undefined) config.sentinelUsername = sentinelUsername;
      if (sentinelPassword !== undefined) config.sentinelPassword = sentinelPassword;
      return withDb(config, db);
    }
    case 'redlock': {
      const nodes = parseHostPortList(
        required(env, 'DISTRIBUTED_LOCK_REDIS_NODES', mode, 'comma-separated host:port of independent Redis masters, e.g. 3 or 5'),
        'DISTRIBUTED_LOCK_REDIS_NODES',
      );
      return withDb<RedlockConnectionConfig>({ mode, nodes, ...common }, db);
    }
  }
}

function withDb<T extends { db?: number }>(config: T, db: number | undefined): T {
  if (db !== undefined) config.db = db;
  return config;
}

function readCommon(env: Environment): CommonConnectionConfig {
  const common: CommonConnectionConfig = {};
  const username = read(env, 'DISTRIBUTED_LOCK_REDIS_USERNAME');
  // A password may legitimately have surrounding spaces: take it verbatim.
  const password = env.DISTRIBUTED_LOCK_REDIS_PASSWORD;
  if (username !== undefined) common.username = username;
  if (password !== undefined && password !== '') common.password = password;
  const tlsText = read(env, 'DISTRIBUTED_LOCK_REDIS_TLS');
  const caFile = read(env, 'DISTRIBUTED_LOCK_REDIS_TLS_CA_FILE');
  const tls = tlsText === undefined ? caFile !== undefined : parseBoolean(tlsText, 'DISTRIBUTED_LOCK_REDIS_TLS');
  if (caFile !== undefined && !tls) {
    throw new InvalidLockConfigError('DISTRIBUTED_LOCK_REDIS_TLS_CA_FILE', 'is set but DISTRIBUTED_LOCK_REDIS_TLS=false; enable TLS or unset the CA file.');
  }
  if (tls) {
    if (caFile === undefined) {
      common.tls = true;
    } else {
      try {
        common.tls = { ca: readFileSync(caFile) };
      } catch (error) {
        throw new InvalidLockConfigError('DISTRIBUTED_LOCK_REDIS_TLS_CA_FILE', `cannot read "${caFile}": ${(error as Error).message}.`);
      }
    }
  }
  return common;
}
