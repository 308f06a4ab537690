import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { ROOT, run, userEnv } from './packed-library.js';

/**
 * Nest applications generated as `nest new` generates them, for the pack test to install the
 * library into. What takes time is cached under the OS temp directory, per checkout, and reused
 * for a week: the Nest CLIs, the generated apps with their `npm install`, and a Node.js from the
 * registry. Each run still installs its own tarball into the apps. A fresh machine (CI) builds it
 * all from the registry: a freshly generated app gets its template's packages and this run's
 * tarball in one `npm install`. npm takes what its cache has without asking the registry again
 * (--prefer-offline: the cache of a CI run is minutes old), and its cache makes the second app's
 * install cheaper than the first. (Made one after the other: npm installs side by side only slowed
 * each other down, with twice the system time.)
 */
const CACHE = join(tmpdir(), 'nestjs-distributed-lock-apps', createHash('sha256').update(ROOT).digest('hex').slice(0, 10));
const MAX_AGE_MS = 7 * 24 * 3600_000;
const NPM = ['--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'];
const INSTALL_TIMEOUT_MS = 600_000;
/** The tarball's name inside an app, so that its package.json says `file:nestjs-distributed-lock.tgz` from run to run. */
const TARBALL = 'nestjs-distributed-lock.tgz';

export interface AppTemplate {
  /** Directory name of the app, e.g. 'nest12-esm'. */
  name: string;
  /** The CLI a user runs (`npx @nestjs/cli@12 new`); its @nestjs/schematics application schematic makes the app. */
  cli: string;
  /** Answers to the schematic's prompts, as flags (`--type=cjs` answers "Which module system?"). */
  answers: string[];
}

/** Runs `make` in an empty `dir` unless a previous run did so with the same key within MAX_AGE_MS. */
async function cached(dir: string, key: string, make: () => Promise<void>): Promise<void> {
  const marker = join(dir, '.made-by-pack-test');
  if (existsSync(marker) && readFileSync(marker, 'utf8') === key && Date.now() - statSync(marker).mtimeMs < MAX_AGE_MS) return;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  await make();
  writeFileSync(marker, key);
}

async function npmInstall(cwd: string, specs: string[] = []): Promise<void> {
  await run('npm', ['install', ...NPM, ...specs], { cwd, env: userEnv(), timeout: INSTALL_TIMEOUT_MS });
}

/** A directory with just `specs` installed (a CLI, a Node.js binary package). */
export async function installed(name: string, specs: string[]): Promise<string> {
  const dir = join(CACHE, name);
  await cached(dir, specs.join(' '), async () => {
    writeFileSync(join(dir, 'package.json'), '{ "private": true }\n');
    await npmInstall(dir, specs);
  });
  return dir;
}

/**
 * The app generated from `template` and installed (cached), then this run's tarball and ioredis
 * installed into it as the README says (`npm install nestjs-distributed-lock ioredis`), and `files`
 * (path in the app -> content) written. Returns the app's directory.
 */
export async function nestApp(template: AppTemplate, tarball: string, ioredis: string, files: Record<string, string>): Promise<string> {
  const cli = await installed(`cli-${template.cli.replace(/[^\w.]+/g, '-')}`, [template.cli]);
  const dir = join(CACHE, template.name);
  const library = [`./${TARBALL}`, `ioredis@${ioredis}`];
  let installedLibrary = false;
  await cached(dir, JSON.stringify(template), async () => {
    // What `nest new <name> --skip-git --skip-install --package-manager npm` runs, with the prompts answered.
    const schematics = join(cli, 'node_modules/@angular-devkit/schematics-cli/bin/schematics.js');
    await run(
      process.execPath,
      [
        schematics,
        '@nestjs/schematics:application',
        `--name=${template.name}`,
        `--directory=${template.name}`,
        '--no-dry-run',
        '--skip-git',
        '--strict',
        '--package-manager=npm',
        '--language=ts',
        ...template.answers,
        '--no-interactive',
      ],
      { cwd: CACHE, env: userEnv() },
    );
    // `nest new` would install the template's packages now, and the README's install add the
    // library and ioredis after; one install of both builds the same tree, once.
    copyFileSync(tarball, join(dir, TARBALL));
    await npmInstall(dir, library);
    installedLibrary = true;
  });
  if (!installedLibrary) {
    copyFileSync(tarball, join(dir, TARBALL));
    await npmInstall(dir, library);
  }
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

/**
 * The bin directory of a Node.js from the npm registry: `node-<platform>-<arch>` is the package that
 * the registry's `node` package installs, with the official binary inside.
 */
export async function registryNode(range: string): Promise<string> {
  const name = `node-${process.platform}-${process.arch}`;
  const dir = await installed(`node-${range}`, [`${name}@${range}`]);
  return join(dir, 'node_modules', name, 'bin');
}

export interface ScriptRun {
  code: number;
  output: string;
}

/** `npm run <script>` in the app as a user runs it (CI=true), on the Node.js in `nodeBin` if given. */
export async function npmRun(dir: string, script: string, options: { nodeBin?: string; env?: Record<string, string> } = {}): Promise<ScriptRun> {
  const PATH = options.nodeBin ? `${options.nodeBin}${delimiter}${process.env.PATH}` : process.env.PATH!;
  try {
    const { stdout, stderr } = await run('npm', ['run', script], { cwd: dir, env: userEnv({ CI: 'true', PATH, ...options.env }), timeout: 300_000 });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : -1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

/** The number of passed tests in Jest's or Vitest's summary ("Tests: 3 passed" / "Tests  3 passed"). */
export function passedTests(output: string): number {
  return Number(/Tests:?\s+(\d+) passed/.exec(output)?.[1] ?? 0);
}
