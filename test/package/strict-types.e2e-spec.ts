import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installed } from './nest-apps.js';
import { installedVersion, packLibrary, ROOT, run, userEnv } from './packed-library.js';

/**
 * The packed library's declarations as a strict user project compiles them: `strict: true` and
 * `skipLibCheck: false`, so every .d.ts the package ships is checked (a declaration that names one
 * `stripInternal` removed, or an optional peer that is not installed, fails here and nowhere else).
 * Two projects, each importing the three entry points and using the main API (LockService, the
 * decorator, LockClient.connect, lock / tryLock, `await using`):
 * - ESM: `"type": "module"`, `module: nodenext`, NestJS 12, ioredis;
 * - CommonJS: no `"type"`, `module: node16`, NestJS 11 (12 is ESM only: a CommonJS project cannot
 *   import it before TypeScript 5.8), node-redis and no ioredis.
 * Each on TypeScript 5.2 (the README's floor), the workspace's own and 7 (the native compiler), as
 * the registry serves them; a compiler that cannot be installed is reported as a skipped test, with
 * npm's reason.
 */
const COMPILERS: { version: string; spec?: string }[] = [
  { version: '5.2', spec: 'typescript@~5.2.2' },
  { version: installedVersion('typescript') },
  { version: '7', spec: 'typescript@^7.0.0' },
];

const COMPILER_OPTIONS = {
  target: 'ES2022',
  lib: ['ES2022', 'ESNext.Disposable'],
  strict: true,
  skipLibCheck: false,
  noEmit: true,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  types: ['node'],
};

interface UserProject {
  name: string;
  /** package.json's "type", if any. */
  type?: 'module';
  module: string;
  source: string;
  /** Packages besides the library, as `npm install` takes them. */
  packages: string[];
}

const fixture = (name: string): string => readFileSync(fileURLToPath(new URL(`fixtures/${name}`, import.meta.url)), 'utf8');
const PROJECTS: UserProject[] = [
  {
    name: 'esm',
    type: 'module',
    module: 'nodenext',
    source: fixture('strict-esm.ts'),
    packages: ['@nestjs/common', '@nestjs/core', 'reflect-metadata', 'rxjs', 'ioredis', '@types/node'].map((name) => `${name}@${installedVersion(name)}`),
  },
  {
    name: 'commonjs',
    module: 'node16',
    source: fixture('strict-cjs.ts'),
    packages: [
      '@nestjs/common@^11.0.0',
      '@nestjs/core@^11.0.0',
      ...['reflect-metadata', 'rxjs', 'redis', '@types/node'].map((name) => `${name}@${installedVersion(name)}`),
    ],
  },
];

/** Each compiler's tsc, installed once (cached with the Nest apps' tools), or why it could not be. */
async function compilerBin({ spec }: (typeof COMPILERS)[number]): Promise<{ tsc: string } | { missing: string }> {
  if (!spec) return { tsc: join(ROOT, 'node_modules/typescript/bin/tsc') };
  try {
    return { tsc: join(await installed(spec.replace(/[^\w.]+/g, '-'), [spec]), 'node_modules/typescript/bin/tsc') };
  } catch (error) {
    const failed = error as { stderr?: string; message: string };
    return { missing: `npm install ${spec} failed: ${(failed.stderr || failed.message).trim().split('\n').slice(-3).join(' ')}` };
  }
}

const compilers: ((typeof COMPILERS)[number] & ({ tsc: string } | { missing: string }))[] = [];
for (const compiler of COMPILERS) compilers.push({ ...compiler, ...(await compilerBin(compiler)) });

describe('the packed declarations in strict user projects (skipLibCheck: false)', () => {
  let workdir: string;

  beforeAll(async () => {
    workdir = mkdtempSync(join(tmpdir(), 'dlock-strict-types-'));
    const { tarball } = await packLibrary(workdir);
    for (const project of PROJECTS) {
      const dir = join(workdir, project.name);
      mkdirSync(dir);
      copyFileSync(tarball, join(dir, 'nestjs-distributed-lock.tgz'));
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `strict-${project.name}`, private: true, ...(project.type && { type: project.type }) }));
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { ...COMPILER_OPTIONS, module: project.module }, files: ['main.ts'] }));
      writeFileSync(join(dir, 'main.ts'), project.source);
      // One after the other: npm installs side by side only slow each other down (see nest-apps.ts).
      await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', './nestjs-distributed-lock.tgz', ...project.packages], {
        cwd: dir,
        env: userEnv(),
        timeout: 240_000,
      });
    }
  }, 600_000);
  afterAll(() => {
    if (workdir) rmSync(workdir, { recursive: true, force: true });
  });

  it('the CommonJS project has no ioredis, and NestJS 11', () => {
    const dir = join(workdir, 'commonjs', 'node_modules');
    expect(() => readFileSync(join(dir, 'ioredis/package.json'))).toThrow();
    expect((JSON.parse(readFileSync(join(dir, '@nestjs/core/package.json'), 'utf8')) as { version: string }).version).toMatch(/^11\./);
  });

  for (const compiler of compilers) {
    if ('missing' in compiler) {
      console.warn(`strict declarations on TypeScript ${compiler.version}: skipped, ${compiler.missing}`);
      it.skip(`TypeScript ${compiler.version}: skipped, ${compiler.missing}`, () => undefined);
      continue;
    }
    for (const project of PROJECTS) {
      it(`compile in the ${project.name} project on TypeScript ${compiler.version}`, async () => {
        const dir = join(workdir, project.name);
        const { stdout } = await run(process.execPath, [compiler.tsc, '--version'], { cwd: dir });
        expect(stdout).toMatch(new RegExp(`^Version ${compiler.version.replace(/\./g, '\\.')}`));
        const errors = await run(process.execPath, [compiler.tsc, '-p', dir, '--pretty', 'false'], { cwd: dir, timeout: 120_000 }).then(
          () => [],
          (error: { stdout?: string; message: string }) => (error.stdout || error.message).trim().split('\n'),
        );
        expect(errors).toEqual([]);
      }, 150_000);
    }
  }
});
