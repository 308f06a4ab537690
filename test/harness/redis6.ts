import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/** Where `npm run setup` puts it (scripts/setup-redis6.mjs); REDIS6_SERVER_BIN points elsewhere. */
const DEFAULT_BIN = resolve('.cache/redis-6/bin/redis-server');

export type Redis6 = { bin: string; version: string } | { missing: string };

let found: Redis6 | undefined;

/** The Redis 6 server binary for compatibility tests, or why there is none. */
export function findRedis6(): Redis6 {
  if (found) return found;
  const bin = process.env.REDIS6_SERVER_BIN || DEFAULT_BIN;
  if (!existsSync(bin)) {
    found = { missing: `${bin} does not exist; npm run setup fetches it on Debian/Ubuntu (see its output for why it could not)` };
    return found;
  }
  const result = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  const version = /v=(\d+\.[\d.]+)/.exec(result.stdout ?? '')?.[1];
  if (!version?.startsWith('6.')) {
    found = { missing: `${bin} --version says ${JSON.stringify((result.stdout || result.stderr || String(result.error)).trim())}, not Redis 6.x` };
    return found;
  }
  found = { bin, version };
  return found;
}

/**
 * Registers `define` with the Redis 6 binary, or, without one, a single skipped test whose title
 * carries the reason (and prints it once), so the run reports it as skipped, never as passed.
 */
export function withRedis6(title: string, define: (redis6: { bin: string; version: string }) => void): void {
  const redis6 = findRedis6();
  if ('bin' in redis6) {
    define(redis6);
    return;
  }
  console.warn(`${title}: skipped, no Redis 6 server (${redis6.missing})`);
  describe(title, () => {
    it.skip(`skipped: no Redis 6 server (${redis6.missing})`, () => undefined);
  });
}
