import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const run = promisify(execFile);
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const LIBRARY = join(ROOT, 'libs/distributed-lock');

export interface PackedLibrary {
  /** Absolute path of the .tgz. */
  tarball: string;
  /** Paths inside the package, as `npm pack` lists them. */
  files: string[];
}

/** `npm pack` of the library into `destination` (prepack builds it and copies README and LICENSE in). */
export async function packLibrary(destination: string): Promise<PackedLibrary> {
  const { stdout } = await run('npm', ['pack', '--json', '--loglevel=error', '--pack-destination', destination], { cwd: LIBRARY, env: userEnv() });
  // prepack's own output (npm run build) comes before the JSON.
  const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
  return { tarball: join(destination, packed!.filename), files: packed!.files.map((file) => file.path) };
}

/** The version installed in the workspace, so that a throwaway app resolves it from npm's cache. */
export function installedVersion(name: string): string {
  return (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}

/**
 * The environment a user's shell would have: without what `npm test` and Jest set for this
 * workspace (npm_config_local_prefix, npm_package_*, JEST_WORKER_ID...), which would leak into the
 * npm and test runs of another project.
 */
export function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(npm_package_|npm_lifecycle_|npm_config_local_prefix$|npm_command$|INIT_CWD$|JEST_WORKER_ID$|NODE_ENV$)/.test(name)) continue;
    env[name] = value;
  }
  return { ...env, NO_COLOR: '1', FORCE_COLOR: '0', ...extra };
}
