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
  'REDIS_MODE',
  'REDIS_URL',
  'REDIS_HOST',
  'REDIS_PORT',
  'REDIS_DB',
  'REDIS_NODES',
  'REDIS_NAT_MAP',
  'REDIS_MASTER',
  'REDIS_REPLICAS',
  'REDIS_SENTINELS',
  'REDIS_SENTINEL_MASTER',
  'REDIS_SENTINEL_USERNAME',
  'REDIS_SENTINEL_PASSWORD',
  'REDIS_USERNAME',
  'REDIS_PASSWORD',
  'REDIS_TLS',
  'REDIS_TLS_CA_FILE',
  'LOCK_KEY_PREFIX',
  'LOCK_ONE_SLOT_PER_SCRIPT',
  'LOCK_WATCHDOG_TIMEOUT',
  'LOCK_WAIT_TIME',
  'LOCK_SHUTDOWN_TIMEOUT',
  'LOCK_REPLICA_ACK',
  'LOCK_REPLICA_ACK_TIMEOUT',
  'LOCK_INSTANCE_NAME',
] as const;

function read(env: Environment, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function required(env: Environment, name: string, mode: RedisMode, form: string): string {
  const value = read(env, name);
  if (value === undefined) {
    throw new InvalidLockConfigError(name, `REDIS_MODE=${mode} needs ${name} (${form}).`);
  }
  return value;
}

/** Connection settings from `REDIS_*` variables. Throws InvalidLockConfigError naming the variable. */
export function readConnectionConfigFromEnv(env: Environment): ConnectionConfig {
  const rawMode = (read(env, 'REDIS_MODE') ?? 'single').toLowerCase();
  if (!(REDIS_MODES as readonly string[]).includes(rawMode)) {
    throw new InvalidLockConfigError('REDIS_MODE', `"${rawMode}" is not a deployment mode; use one of ${REDIS_MODES.join(', ')}.`);
  }
  const mode = rawMode as RedisMode;
  const common = readCommon(env);
  const dbText = read(env, 'REDIS_DB');
  const db = dbText === undefined ? undefined : parseDb(dbText, 'REDIS_DB');

  switch (mode) {
    case 'single': {
      const url = read(env, 'REDIS_URL');
      const host = read(env, 'REDIS_HOST');
      const port = read(env, 'REDIS_PORT');
      if (url !== undefined) {
        if (host !== undefined || port !== undefined) {
          throw new InvalidLockConfigError('REDIS_URL', 'set either REDIS_URL or REDIS_HOST/REDIS_PORT, not both.');
        }
        if (!/^rediss?:\/\//.test(url)) {
          throw new InvalidLockConfigError('REDIS_URL', `"${url}" must start with redis:// or rediss:// (TLS).`);
        }
        return withDb<SingleConnectionConfig>({ mode, url, ...common }, db);
      }
      return withDb<SingleConnectionConfig>(
        { mode, host: host ?? '127.0.0.1', port: port === undefined ? 6379 : parsePort(port, 'REDIS_PORT'), ...common },
        db,
      );
    }
    case 'cluster': {
      if (db !== undefined && db !== 0) {
        throw new InvalidLockConfigError('REDIS_DB', 'Redis Cluster has only database 0; unset REDIS_DB.');
      }
      const nodes = parseHostPortList(required(env, 'REDIS_NODES', mode, 'comma-separated host:port of cluster nodes'), 'REDIS_NODES');
      const natText = read(env, 'REDIS_NAT_MAP');
      return natText === undefined ? { mode, nodes, ...common } : { mode, nodes, natMap: parseNatMap(natText, 'REDIS_NAT_MAP'), ...common };
    }
    case 'master-slave': {
      const master = parseHostPort(required(env, 'REDIS_MASTER', mode, 'host:port of the master'), 'REDIS_MASTER');
      const replicasText = read(env, 'REDIS_REPLICAS');
      const replicas = replicasText === undefined ? [] : parseHostPortList(replicasText, 'REDIS_REPLICAS');
      return withDb<MasterSlaveConnectionConfig>({ mode, master, replicas, ...common }, db);
    }
    case 'sentinel': {
      const sentinels = parseHostPortList(required(env, 'REDIS_SENTINELS', mode, 'comma-separated host:port of sentinels'), 'REDIS_SENTINELS');
      const masterName = required(env, 'REDIS_SENTINEL_MASTER', mode, 'the master name the sentinels monitor, e.g. mymaster');
      const config: SentinelConnectionConfig = { mode, sentinels, masterName, ...common };
      const sentinelUsername = read(env, 'REDIS_SENTINEL_USERNAME');
      const sentinelPassword = read(env, 'REDIS_SENTINEL_PASSWORD');
      if (sentinelUsername !== undefined) config.sentinelUsername = sentinelUsername;
      if (sentinelPassword !== undefined) config.sentinelPassword = sentinelPassword;
      return withDb(config, db);
    }
    case 'redlock': {
      const nodes = parseHostPortList(required(env, 'REDIS_NODES', mode, 'comma-separated host:port of independent Redis masters, e.g. 3 or 5'), 'REDIS_NODES');
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
  const username = read(env, 'REDIS_USERNAME');
  // A password may legitimately have surrounding spaces: take it verbatim.
  const password = env.REDIS_PASSWORD;
  if (username !== undefined) common.username = username;
  if (password !== undefined && password !== '') common.password = password;
  const tlsText = read(env, 'REDIS_TLS');
  const caFile = read(env, 'REDIS_TLS_CA_FILE');
  const tls = tlsText === undefined ? caFile !== undefined : parseBoolean(tlsText, 'REDIS_TLS');
  if (caFile !== undefined && !tls) {
    throw new InvalidLockConfigError('REDIS_TLS_CA_FILE', 'is set but REDIS_TLS=false; enable TLS or unset the CA file.');
  }
  if (tls) {
    if (caFile === undefined) {
      common.tls = true;
    } else {
      try {
        common.tls = { ca: readFileSync(caFile) };
      } catch (error) {
        throw new InvalidLockConfigError('REDIS_TLS_CA_FILE', `cannot read "${caFile}": ${(error as Error).message}.`);
      }
    }
  }
  return common;
}
