import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { matchVersion, serverBin, SERVERS, type ServerEntry, type ServerId } from '../../scripts/servers.mjs';

export type { ServerId };

/** A server of the compatibility tests (scripts/servers.mjs), found and answering to its version. */
export interface FoundServer {
  readonly id: ServerId;
  /** The executable to start (RedisServerOptions.bin). */
  readonly bin: string;
  /** Its exact version, from `--version`. */
  readonly version: string;
  /** 'Valkey 9.1.2', for test titles. */
  readonly label: string;
  readonly entry: ServerEntry;
}

const found = new Map<ServerId, FoundServer | { missing: string }>();

/** SERVER_BIN_VALKEY_8_1 and the like point a server at another executable than set-up's. */
export function binVariable(id: ServerId): string {
  return `SERVER_BIN_${id.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/** The server `id` (where `npm run setup` put it, or its SERVER_BIN_* variable), or why there is none. */
export function findServer(id: ServerId): FoundServer | { missing: string } {
  const known = found.get(id);
  if (known) return known;
  const entry = SERVERS.find((server) => server.id === id);
  if (!entry) throw new Error(`no server "${id}" in scripts/servers.mjs`);
  const variable = binVariable(id);
  const bin = process.env[variable] || serverBin(entry);
  let result: FoundServer | { missing: string };
  if (!existsSync(bin)) {
    result = {
      missing: process.env[variable]
        ? `${variable}=${bin} does not exist`
        : `${bin} does not exist; npm run setup fetches it on Debian/Ubuntu (its output says why it could not)`,
    };
  } else {
    const ran = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 20_000 });
    const version = matchVersion(entry, ran.stdout);
    result = version
      ? { id, bin, version, label: `${entry.product} ${version}`, entry }
      : {
          missing: `${bin} --version says ${JSON.stringify((ran.stdout || ran.stderr || String(ran.error)).trim())}, not ${entry.product} ${entry.version}.x; run npm run setup again`,
        };
  }
  found.set(id, result);
  return result;
}

/**
 * Registers `define` with the server `id`, or, without one, a single skipped test whose title
 * carries the reason (and prints it once), so the run reports it as skipped, never as passed.
 */
export function withServer(id: ServerId, title: string, define: (server: FoundServer) => void): void {
  const server = findServer(id);
  if ('bin' in server) {
    define(server);
    return;
  }
  const entry = SERVERS.find((each) => each.id === id)!;
  const what = `no ${entry.product} ${entry.version} server`;
  console.warn(`${title}: skipped, ${what} (${server.missing})`);
  describe(title, () => {
    it.skip(`skipped: ${what} (${server.missing})`, () => undefined);
  });
}
