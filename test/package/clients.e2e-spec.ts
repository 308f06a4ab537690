import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { useRedis } from '../harness/use-redis.js';
import { installedVersion, packLibrary, run, userEnv } from './packed-library.js';

/** Two lock clients, the checks a user's first minutes would make, then both closed (apps/lock-checks.mjs). */
const LOCK_CHECKS = fileURLToPath(new URL('apps/lock-checks.mjs', import.meta.url));

/** The same program for both builds: `load` is how the app gets the package and node-redis. */
const program = (load: string, resolved: string): string => `${load}
const socket = { host: '127.0.0.1', port: Number(process.env.REDIS_PORT) };
const natives = [];
const locks = await checkLocks(async () => {
  const native = await createClient({ socket }).connect();
  natives.push(native);
  return LockClient.connect({ client: native });
});
for (const native of natives) await native.close();
// The library's own connections need ioredis, which this app did not install.
const refused = await LockClient.connect({ connection: { mode: 'single', ...socket } }).then(
  () => 'connected',
  (error) => ({ configError: error instanceof InvalidLockConfigError, code: error.code, message: error.message }),
);
console.log(JSON.stringify({ resolved: ${resolved}, locks, refused }));
`;

const ESM_APP = program(
  `import { InvalidLockConfigError, LockClient } from 'nestjs-distributed-lock';
import { createClient } from 'redis';
import { checkLocks } from './lock-checks.mjs';`,
  `import.meta.resolve('nestjs-distributed-lock')`,
);

/**
 * The CommonJS build (dist/cjs), which Node itself never picks (its require() gets the ES module build,
 * `module-sync`) but Jest's CommonJS mode and bundlers do: required by its path here, with Node's
 * require(esm) loading Nest 12, which is ES modules only.
 */
const CJS_APP = `(async () => {
const { dirname, join } = require('node:path');
const cjsBuild = join(dirname(require.resolve('nestjs-distributed-lock/package.json')), 'dist/cjs/index.js');
${program(
  `const { InvalidLockConfigError, LockClient } = require(cjsBuild);
const { createClient } = require('redis');
const { checkLocks } = await import('./lock-checks.mjs');`,
  `cjsBuild`,
)}})();
`;

/** A GLIDE app: the lock client is given GlideClient and a configuration, and makes its clients itself. */
const GLIDE_APP = `import { Logger, GlideClient } from '@valkey/valkey-glide';
import { LockClient } from 'nestjs-distributed-lock';
import { checkLocks } from './lock-checks.mjs';

Logger.init('error'); // GLIDE logs every error reply at WARN, the library's first NOSCRIPT among them
const configuration = { addresses: [{ host: '127.0.0.1', port: Number(process.env.REDIS_PORT) }] };
const locks = await checkLocks(() => LockClient.connect({ client: { glide: GlideClient, configuration } }));
console.log(JSON.stringify({ locks }));
`;

interface AppOutput {
  resolved: string;
  locks: { excluded: boolean; channel: string; acquiredAfterRelease: boolean; tokensIncrease: boolean; mode: string };
  refused: { configError: boolean; code: string; message: string } | string;
}

/**
 * The packed library in an app that installed node-redis 6 and Valkey GLIDE and not ioredis, as
 * `npm install nestjs-distributed-lock redis@6 @valkey/valkey-glide` does: node-redis 6 is in the peer
 * range and ioredis an optional peer, so the install resolves without --legacy-peer-deps, and GLIDE
 * brings its native part from the registry (its platform package). The package loads without ioredis
 * (required only when the library makes its own connections) and locks on the node-redis client,
 * from the ES module build and from the CommonJS one, and on GLIDE; a `connection`, which would need
 * ioredis, fails with a configuration error that says to install it.
 */
describe('the packed library with node-redis 6 or Valkey GLIDE, and without ioredis', () => {
  const redis = useRedis();
  let workdir: string;
  let app: string;

  beforeAll(async () => {
    workdir = mkdtempSync(join(tmpdir(), 'dlock-clients-'));
    const { tarball } = await packLibrary(workdir);
    app = join(workdir, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'clients-app', private: true, type: 'module' }, null, 2));
    copyFileSync(LOCK_CHECKS, join(app, 'lock-checks.mjs'));
    writeFileSync(join(app, 'esm.mjs'), ESM_APP);
    writeFileSync(join(app, 'cjs.cjs'), CJS_APP);
    writeFileSync(join(app, 'glide.mjs'), GLIDE_APP);
    // As a user types it; the exact 6.x of the workspace, so that npm's cache answers.
    await run(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        '--loglevel=error',
        tarball,
        `redis@${installedVersion('redis')}`,
        `@valkey/valkey-glide@${installedVersion('@valkey/valkey-glide')}`,
      ],
      {
        cwd: app,
        env: userEnv(),
        timeout: 240_000,
      },
    );
  }, 300_000);
  afterAll(() => {
    if (workdir) rmSync(workdir, { recursive: true, force: true });
  });

  const runApp = async (args: string[]): Promise<AppOutput> => {
    const { stdout } = await run(process.execPath, args, { cwd: app, env: userEnv({ REDIS_PORT: String(redis.server().port) }), timeout: 30_000 });
    return JSON.parse(stdout) as AppOutput;
  };

  const expectLocksAndRefusal = (output: AppOutput): void => {
    expect(output.locks).toEqual({ excluded: true, channel: expect.any(String), acquiredAfterRelease: true, tokensIncrease: true, mode: 'client' });
    expect(output.refused).toEqual({ configError: true, code: 'LOCK_INVALID_CONFIG', message: expect.stringContaining('npm install ioredis') });
  };

  it('installs node-redis 6 and GLIDE (with its native part for this platform) beside it, and no ioredis', () => {
    const installed = (name: string): { version: string } =>
      JSON.parse(readFileSync(join(app, 'node_modules', name, 'package.json'), 'utf8')) as { version: string };
    expect(installed('redis').version).toMatch(/^6\./);
    expect(installed('@valkey/valkey-glide').version).toMatch(/^2\./);
    expect(existsSync(join(app, 'node_modules/ioredis'))).toBe(false);
  });

  it('the ES module build locks on the node-redis client; a connection of its own asks for ioredis', async () => {
    const output = await runApp(['esm.mjs']);
    expect(output.resolved).toMatch(/\/node_modules\/nestjs-distributed-lock\/dist\/index\.js$/);
    expectLocksAndRefusal(output);
  }, 60_000);

  it('the CommonJS build does the same', async () => {
    const output = await runApp(['cjs.cjs']);
    expect(output.resolved).toMatch(/\/node_modules\/nestjs-distributed-lock\/dist\/cjs\/index\.js$/);
    expectLocksAndRefusal(output);
  }, 60_000);

  it('locks on Valkey GLIDE: the lock client makes its GLIDE clients from the class and configuration given, and closes them', async () => {
    const output = await runApp(['glide.mjs']);
    expect(output.locks).toEqual({ excluded: true, channel: expect.any(String), acquiredAfterRelease: true, tokensIncrease: true, mode: 'client' });
  }, 60_000);
});
