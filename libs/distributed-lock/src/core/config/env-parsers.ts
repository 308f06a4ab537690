import { InvalidLockConfigError } from '../errors/invalid-lock-config.error.js';
import type { HostPort } from './connection-config.js';

const HOST_PORT = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s[\]]+)):(\d{1,5})$/;

/** `host:port` or `[ipv6]:port`. */
export function parseHostPort(value: string, setting: string): HostPort {
  const match = HOST_PORT.exec(value.trim());
  if (!match) {
    throw new InvalidLockConfigError(setting, `"${value}" is not host:port (examples: 127.0.0.1:6379, redis-1:7000, [::1]:6379).`);
  }
  return { host: (match[1] ?? match[2])!, port: parsePort(match[3]!, setting) };
}

/** A comma-separated list of `host:port`, at least one. */
export function parseHostPortList(value: string, setting: string): HostPort[] {
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
  if (items.length === 0) {
    throw new InvalidLockConfigError(setting, `expected a comma-separated list of host:port, e.g. "10.0.0.1:7000,10.0.0.2:7000", got "${value}".`);
  }
  return items.map((item) => parseHostPort(item, setting));
}

export function parsePort(value: string, setting: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value.trim()) || port < 1 || port > 65535) {
    throw new InvalidLockConfigError(setting, `"${value}" is not a TCP port (an integer 1-65535).`);
  }
  return port;
}

export function parseDb(value: string, setting: string): number {
  const db = Number(value);
  if (!/^\d+$/.test(value.trim()) || db > 15_999) {
    throw new InvalidLockConfigError(setting, `"${value}" is not a database index (an integer >= 0).`);
  }
  return db;
}

const TRUE = ['true', '1', 'yes', 'on'];
const FALSE = ['false', '0', 'no', 'off', ''];

export function parseBoolean(value: string, setting: string): boolean {
  const normalized = value.trim().toLowerCase();
  if (TRUE.includes(normalized)) return true;
  if (FALSE.includes(normalized)) return false;
  throw new InvalidLockConfigError(setting, `"${value}" is not a boolean (true/false, 1/0, yes/no).`);
}

/** `from-host:port=to-host:port,...` (cluster NAT mapping). */
export function parseNatMap(value: string, setting: string): Record<string, HostPort> {
  const map: Record<string, HostPort> = {};
  for (const entry of value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)) {
    const [from, to, ...rest] = entry.split('=');
    if (!from || !to || rest.length) {
      throw new InvalidLockConfigError(setting, `"${entry}" is not an address mapping; use internal-host:port=external-host:port, comma-separated.`);
    }
    const source = parseHostPort(from, setting);
    map[`${source.host}:${source.port}`] = parseHostPort(to, setting);
  }
  return map;
}
