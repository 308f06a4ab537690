import { InvalidLockConfigError } from '../errors/invalid-lock-config.error.js';
import { REDIS_MODES, type ConnectionConfig, type HostPort } from './connection-config.js';
import { describe } from '../util/duration.js';
import { isPlainObject } from '../util/validate.js';

const COMMON_KEYS = ['mode', 'username', 'password', 'tls', 'redisOptions'];
const KEYS_BY_MODE: Record<ConnectionConfig['mode'], string[]> = {
  single: [...COMMON_KEYS, 'url', 'host', 'port', 'db'],
  cluster: [...COMMON_KEYS, 'nodes', 'natMap', 'clusterOptions'],
  'master-slave': [...COMMON_KEYS, 'master', 'replicas', 'db'],
  sentinel: [...COMMON_KEYS, 'sentinels', 'masterName', 'sentinelUsername', 'sentinelPassword', 'db'],
  redlock: [...COMMON_KEYS, 'nodes', 'db'],
};

/** Checks a programmatic `connection` option with the same rigour as the environment parser. */
export function validateConnectionConfig(config: unknown, path = 'connection'): ConnectionConfig {
  if (!isPlainObject(config)) {
    throw new InvalidLockConfigError(path, `expected an object with a "mode", got ${describe(config)}.`);
  }
  const mode = config.mode;
  if (typeof mode !== 'string' || !(REDIS_MODES as readonly string[]).includes(mode)) {
    throw new InvalidLockConfigError(`${path}.mode`, `expected one of ${REDIS_MODES.join(', ')}, got ${describe(mode)}.`);
  }
  const known = KEYS_BY_MODE[mode as ConnectionConfig['mode']];
  for (const key of Object.keys(config)) {
    if (!known.includes(key)) {
      throw new InvalidLockConfigError(`${path}.${key}`, `is not an option of mode "${mode}"; known: ${known.join(', ')}.`);
    }
  }
  if (config.db !== undefined && !(Number.isInteger(config.db) && (config.db as number) >= 0)) {
    throw new InvalidLockConfigError(`${path}.db`, `expected an integer >= 0, got ${describe(config.db)}.`);
  }
  switch (mode) {
    case 'single':
      if (config.url !== undefined && (config.host !== undefined || config.port !== undefined)) {
        throw new InvalidLockConfigError(`${path}.url`, 'give either url or host/port, not both.');
      }
      if (config.url !== undefined && (typeof config.url !== 'string' || !/^rediss?:\/\//.test(config.url))) {
        throw new InvalidLockConfigError(`${path}.url`, `expected redis://host:port or rediss://host:port, got ${describe(config.url)}.`);
      }
      if (config.host !== undefined && (typeof config.host !== 'string' || config.host.trim() === '')) {
        throw new InvalidLockConfigError(`${path}.host`, `expected a host name or address, got ${describe(config.host)}.`);
      }
      if (config.port !== undefined) checkPort(config.port, `${path}.port`);
      break;
    case 'cluster':
    case 'redlock':
      checkNodes(config.nodes, `${path}.nodes`);
      break;
    case 'master-slave':
      checkNode(config.master, `${path}.master`);
      checkNodes(config.replicas ?? [], `${path}.replicas`, true);
      break;
    case 'sentinel':
      checkNodes(config.sentinels, `${path}.sentinels`);
      if (typeof config.masterName !== 'string' || config.masterName.trim() === '') {
        throw new InvalidLockConfigError(`${path}.masterName`, 'sentinel mode needs the monitored master name, e.g. "mymaster".');
      }
      break;
  }
  return config as unknown as ConnectionConfig;
}

function checkPort(port: unknown, path: string): void {
  if (!Number.isInteger(port) || (port as number) < 1 || (port as number) > 65535) {
    throw new InvalidLockConfigError(path, `expected a TCP port (integer 1-65535), got ${describe(port)}.`);
  }
}

function checkNode(node: unknown, path: string): asserts node is HostPort {
  if (!isPlainObject(node) || typeof node.host !== 'string' || node.host.trim() === '') {
    throw new InvalidLockConfigError(path, `expected { host, port }, got ${describe(node)}.`);
  }
  checkPort(node.port, `${path}.port`);
}

function checkNodes(nodes: unknown, path: string, allowEmpty = false): void {
  if (!Array.isArray(nodes) || (!allowEmpty && nodes.length === 0)) {
    throw new InvalidLockConfigError(path, `expected ${allowEmpty ? 'an' : 'a non-empty'} array of { host, port }, got ${describe(nodes)}.`);
  }
  nodes.forEach((node, index) => checkNode(node, `${path}[${index}]`));
}
