import type { RedisCommands } from '../redis/redis-port.js';
import type { InspectedLockKind } from './lock-inspection.js';

/** Keys read per SCAN call (a hint to Redis: each call stays short whatever the keyspace's size). */
const SCAN_COUNT = 1000;

/** Escapes Redis glob characters, so that the prefix matches only itself. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

/**
 * Lock names (with the kinds found under each) whose name matches the glob `pattern`, found with SCAN
 * (never KEYS: each call reads a bounded number of keys, so a large keyspace does not block Redis)
 * on every master, until `limit` names are found. `truncated` says whether the scan stopped early.
 * `kindOfSuffix`: the kind whose main key ends with a suffix after `<prefix>{name}` (each kind's
 * variant); other keys (the fence counter, a queue, a reader or holder set) are parts of a lock listed
 * by its main key.
 */
export async function scanLockNames(
  redis: RedisCommands,
  prefix: string,
  pattern: string,
  limit: number,
  kindOfSuffix: ReadonlyMap<string, InspectedLockKind>,
  roundTrip: <T>(call: () => Promise<T>) => Promise<T>,
): Promise<{ names: Map<string, Set<InspectedLockKind>>; truncated: boolean }> {
  const match = `${escapeGlob(prefix)}{${pattern}}*`;
  const names = new Map<string, Set<InspectedLockKind>>();
  const start = prefix.length + 1;
  // Every master of a cluster (each holds its own slots' keys), else the one connection.
  for (const node of await roundTrip(() => redis.masters())) {
    let cursor = '0';
    do {
      const at = cursor;
      const [next, keys] = await roundTrip(() => node.scan(at, match, SCAN_COUNT));
      cursor = next;
      for (const key of keys) {
        const close = key.indexOf('}', start);
        if (!key.startsWith(`${prefix}{`) || close < 0) continue;
        const kind = kindOfSuffix.get(key.slice(close + 1));
        if (kind === undefined) continue;
        const name = key.slice(start, close);
        if (!names.has(name) && names.size >= limit) return { names, truncated: true };
        const kinds = names.get(name) ?? new Set<InspectedLockKind>();
        kinds.add(kind);
        names.set(name, kinds);
      }
    } while (cursor !== '0');
  }
  return { names, truncated: false };
}

/**
 * The client ids of the registered processes (`<prefix>clients:<client id>`, see InstanceRegistration),
 * found with SCAN on every master, at most `limit` of them. Each SCAN call is one bounded round trip.
 */
export async function scanInstanceIds(
  redis: RedisCommands,
  prefix: string,
  limit: number,
  roundTrip: <T>(call: () => Promise<T>) => Promise<T>,
): Promise<string[]> {
  const start = `${prefix}clients:`;
  const ids = new Set<string>();
  for (const node of await roundTrip(() => redis.masters())) {
    let cursor = '0';
    do {
      const at = cursor;
      const [next, keys] = await roundTrip(() => node.scan(at, `${escapeGlob(start)}*`, SCAN_COUNT));
      cursor = next;
      for (const key of keys) if (key.startsWith(start) && key.length > start.length) ids.add(key.slice(start.length));
      if (ids.size >= limit) return [...ids].slice(0, limit);
    } while (cursor !== '0');
  }
  return [...ids];
}
