import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { matchVersion, serverBin, SERVERS } from '../../scripts/servers.mjs';

/**
 * The servers a benchmark run can measure on: `redis`, the redis-server on PATH (or REDIS_SERVER_BIN),
 * which every machine of the project has; and the servers `npm run setup` fetches into .cache/
 * (scripts/servers.mjs: redis-6.0, redis-8.0, valkey-8.1, valkey-9), found the way the compatibility
 * tests find them (SERVER_BIN_VALKEY_9 and the like point one at another executable).
 */
export const SYSTEM_SERVER = 'redis';
export const SERVER_IDS: readonly string[] = [SYSTEM_SERVER, ...SERVERS.map((server) => server.id)];

/** A server to start for a run: its id and executable (undefined: redis-server on PATH or REDIS_SERVER_BIN). */
export interface ServerChoice {
  readonly id: string;
  readonly bin: string | undefined;
}

/** The server `id`, or why it is not here. */
export function findBenchServer(id: string): ServerChoice | { id: string; missing: string } {
  if (id === SYSTEM_SERVER) return { id, bin: undefined };
  const entry = SERVERS.find((server) => server.id === id);
  if (!entry) return { id, missing: `unknown server "${id}"; known: ${SERVER_IDS.join(', ')}` };
  const variable = `SERVER_BIN_${id.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
  const bin = process.env[variable] || serverBin(entry);
  if (!existsSync(bin)) return { id, missing: `${bin} does not exist (npm run setup fetches it on Debian/Ubuntu)` };
  const ran = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 20_000 });
  if (!matchVersion(entry, ran.stdout)) {
    return {
      id,
      missing: `${bin} --version says ${JSON.stringify((ran.stdout || ran.stderr || String(ran.error)).trim())}, not ${entry.product} ${entry.version}.x`,
    };
  }
  return { id, bin };
}

/**
 * The servers of a run. Named ones (`--servers`) must all be here. Without `--servers`, a full run
 * measures on Redis 7 (the system's) and on Valkey 9 when set-up fetched it: users run both, and the
 * issue's goals are judged on both. `--short` (what CI runs) stays on the system's server alone, to
 * stay a few seconds long; name `--servers` to add others. A server left out is said in `skipped`.
 */
export function chooseServers(requested: readonly string[] | undefined, short: boolean): { servers: ServerChoice[]; skipped: string[] } {
  if (requested) {
    const found = requested.map(findBenchServer);
    const missing = found.filter((server): server is { id: string; missing: string } => 'missing' in server);
    if (missing.length) throw new Error(`--servers: ${missing.map((server) => `${server.id}: ${server.missing}`).join('; ')}`);
    return { servers: found as ServerChoice[], skipped: [] };
  }
  if (short) return { servers: [{ id: SYSTEM_SERVER, bin: undefined }], skipped: [] };
  const valkey = findBenchServer('valkey-9');
  return 'missing' in valkey
    ? { servers: [{ id: SYSTEM_SERVER, bin: undefined }], skipped: [`valkey-9 not measured: ${valkey.missing}`] }
    : { servers: [{ id: SYSTEM_SERVER, bin: undefined }, valkey], skipped: [] };
}
