#!/usr/bin/env node
// `npm run setup`: everything a fresh machine needs, using Node built-ins only (it runs before
// node_modules exists). 1) npm dependencies from the lockfile, 2) redis-server >= 7 (Debian's
// package, installed when missing and possible), 3) the other servers of the compatibility tests
// (Redis 6.0 and 8.0, Valkey 8.1 and 9, in .cache/), 4) Debian's chromium for the lock board's
// browser test (installed when missing and possible, never required), 5) the build.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const MIN_REDIS_MAJOR = 7;

function step(title) {
  console.log(`\n[setup] ${title}`);
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: 'inherit', ...options });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${result.status}`);
}

function has(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

function redisMajor() {
  if (!has('redis-server')) return undefined;
  const version = execFileSync('redis-server', ['--version'], { encoding: 'utf8' });
  const match = /v=(\d+)\./.exec(version);
  return match ? Number(match[1]) : undefined;
}

function fail(message) {
  console.error(`\n[setup] ${message}`);
  process.exit(1);
}

const [nodeMajor, nodeMinor] = process.versions.node.split('.').map(Number);
if (nodeMajor < 20 || (nodeMajor === 20 && nodeMinor < 19)) {
  fail(`Node ${process.versions.node} is too old: this project needs Node >= 20.19 (NestJS 12 is ESM-only).`);
}

step('installing npm dependencies (npm ci)');
// npm's warnings (engines of the benchmark's peers, the user's npmrc) are not the user's to act on
// here; errors are. On success one line; on failure npm's own error lines.
const npmQuiet = ['--no-audit', '--no-fund', '--no-progress', '--loglevel=error'];
const ci = spawnSync('npm', ['ci', ...npmQuiet], { encoding: 'utf8' });
if (ci.status !== 0) {
  const output = `${ci.stdout ?? ''}${ci.stderr ?? ''}`;
  // A registry mirror that lacks some platform's optional binaries of a locked version cannot give a
  // lock file that lists every platform's, and then `npm ci` refuses it. `npm install` installs the
  // same locked versions and skips the optional packages it cannot fetch.
  const missing = output.match(/^npm error Missing: \S+/gm) ?? [];
  if (missing.length === 0) fail(`npm ci failed:\n${output.trim()}`);
  console.log(
    `[setup] npm ci refused the lock file (${missing.length} packages missing from it, e.g. ${missing[0].slice('npm error Missing: '.length)}); installing the locked versions with npm install`,
  );
  const install = spawnSync('npm', ['install', ...npmQuiet], { encoding: 'utf8' });
  if (install.status !== 0) fail(`npm install failed:\n${install.stdout}${install.stderr}`.trim());
}
console.log(`[setup] ${/added \d+ packages?/.exec(ci.stdout ?? '')?.[0] ?? 'installed'} from package-lock.json`);

step(`checking for redis-server >= ${MIN_REDIS_MAJOR}`);
let major = redisMajor();
if (major === undefined || major < MIN_REDIS_MAJOR) {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const sudo = !isRoot && has('sudo') && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0;
  if (has('apt-get') && (isRoot || sudo)) {
    const prefix = isRoot ? [] : ['sudo'];
    const apt = (args) =>
      run(prefix.length ? 'sudo' : 'apt-get', prefix.length ? ['-E', 'apt-get', ...args] : args, {
        env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      });
    console.log("[setup] redis-server is missing or too old; installing Debian's redis-server package");
    apt(['update', '-qq']);
    apt(['install', '-y', '-qq', '--no-install-recommends', 'redis-server']);
    major = redisMajor();
  }
  if (major === undefined) {
    fail(
      'redis-server was not found and could not be installed automatically.\n' +
        '  Debian/Ubuntu: sudo apt-get install redis-server   (provides redis-server and redis-cli;\n' +
        '                 sentinel runs as `redis-server --sentinel`)\n' +
        '  macOS:         brew install redis\n' +
        'Then run `npm run setup` again.',
    );
  }
  if (major < MIN_REDIS_MAJOR) {
    fail(
      `redis-server ${major}.x is too old: sharded pub/sub (cluster mode) needs Redis ${MIN_REDIS_MAJOR}. Install Redis ${MIN_REDIS_MAJOR}+ and run setup again.`,
    );
  }
}
console.log(`[setup] ${execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).trim()}`);
if (!has('redis-cli')) console.log('[setup] note: redis-cli is not on PATH; the tests do not need it.');

step('fetching the other servers the compatibility tests run on (scripts/servers.mjs)');
await (await import('./setup-servers.mjs')).setupServers(); // beside the system's redis-server, never instead of it; never fails set-up

step("checking for a headless browser (Debian's chromium) for the lock board's browser test");
(await import('./setup-browser.mjs')).setupBrowser(); // never fails set-up: without a browser that test is skipped

step('building the library and the demo app (npm run build)');
run('npm', ['run', 'build', '--silent']);

if (!existsSync('libs/distributed-lock/dist/index.js')) fail('the build did not produce libs/distributed-lock/dist/index.js');
console.log('\n[setup] done. Next: `npm run demo` (the demo) or `npm test` (the test suite).');
