import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
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

/**
 * The library packed as `npm pack` packs it (prepack builds it and copies README, LICENSE and the
 * docs in), copied into `destination`. Packed once for what it is made of (see packInputs) and shared
 * by every test file that asks, in this run and later ones: several packs side by side in one
 * checkout would each rebuild, and prepack deletes and copies the package's docs/ while another pack
 * may be reading it.
 */
export async function packLibrary(destination: string): Promise<PackedLibrary> {
  const packed = await packedOnce();
  copyFileSync(join(packed.dir, packed.filename), join(destination, packed.filename));
  return { tarball: join(destination, packed.filename), files: packed.files };
}

const PACKS = join(tmpdir(), 'nestjs-distributed-lock-packs', createHash('sha256').update(ROOT).digest('hex').slice(0, 10));
/** A pack nobody used for this long is deleted by the next one made. */
const PACK_MAX_AGE_MS = 24 * 3600_000;
/** Made by prepack (copies), by the build, or by the site's build: not inputs. */
const NOT_INPUTS =
  /^(?:libs\/distributed-lock\/(?:dist|node_modules|docs|README\.md|CONTRIBUTING\.md|LICENSE)(?:\/|$)|docs\/(?:api|reports|\.vitepress\/(?:cache|dist))\/)/;

interface Pack {
  dir: string;
  filename: string;
  files: string[];
}

/**
 * A digest of everything a pack is made from: the package's sources, build settings and scripts,
 * what prepack copies in from the repository (README, CONTRIBUTING, LICENSE, docs/), the compiler
 * (package-lock.json) and the shared TypeScript settings.
 */
function packInputs(): string {
  const hash = createHash('sha256');
  const add = (path: string): void => {
    if (NOT_INPUTS.test(path)) return;
    const absolute = join(ROOT, path);
    if (statSync(absolute).isDirectory()) {
      for (const entry of readdirSync(absolute).sort()) add(`${path}/${entry}`);
      return;
    }
    hash.update(`${path}\0`).update(readFileSync(absolute)).update('\0');
  };
  for (const path of ['libs/distributed-lock', 'docs', 'README.md', 'CONTRIBUTING.md', 'LICENSE', 'package-lock.json', 'tsconfig.base.json']) add(path);
  return hash.digest('hex').slice(0, 16);
}

/** The pack of the current inputs: made by the first test file that asks (a lock directory keeps out the others, which wait for it). */
async function packedOnce(): Promise<Pack> {
  const dir = join(PACKS, packInputs());
  const done = join(dir, 'packed.json');
  mkdirSync(PACKS, { recursive: true });
  for (const started = performance.now(); ;) {
    if (existsSync(done)) {
      utimesSync(done, new Date(), new Date());
      return { dir, ...(JSON.parse(readFileSync(done, 'utf8')) as Omit<Pack, 'dir'>) };
    }
    try {
      mkdirSync(dir);
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw error;
      if (performance.now() - started > 300_000) throw new Error(`no pack in ${dir} after 5 minutes (another test file is packing)`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      continue;
    }
    try {
      for (const other of readdirSync(PACKS)) {
        const marker = join(PACKS, other, 'packed.json');
        if (other !== basename(dir) && existsSync(marker) && Date.now() - statSync(marker).mtimeMs > PACK_MAX_AGE_MS) {
          rmSync(join(PACKS, other), { recursive: true, force: true });
        }
      }
      const { stdout } = await run('npm', ['pack', '--json', '--loglevel=error', '--pack-destination', dir], { cwd: LIBRARY, env: userEnv() });
      // prepack's own output (npm run build) comes before the JSON.
      const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
      const result = { filename: packed!.filename, files: packed!.files.map((file) => file.path) };
      writeFileSync(`${done}.tmp`, JSON.stringify(result));
      renameSync(`${done}.tmp`, done);
      return { dir, ...result };
    } catch (error) {
      rmSync(dir, { recursive: true, force: true }); // the next file to ask packs again (and reports its own failure)
      throw error;
    }
  }
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
