#!/usr/bin/env node
// A Redis 6 server for the compatibility tests (test/conformance/redis6-*.e2e-spec.ts), next to the
// system's Redis 7, never instead of it: Debian bullseye's redis 6.0.16 binary (package redis-tools;
// redis-server is the same binary under another name) and the shared libraries bookworm lacks
// (libssl1.1, ...), unpacked with `dpkg -x` into .cache/redis-6/ and started through a wrapper that
// sets LD_LIBRARY_PATH. apt-get runs with a private source list, package state and cache, so the
// system's apt configuration is neither read nor changed, and it checks the archive's signatures
// with Debian's keyring. Node built-ins only (it runs from setup.mjs). Cached: a second run only
// asks the binary for its version. Never fails set-up: without it, the Redis 6 tests say why they
// are skipped.
//
//   node scripts/setup-redis6.mjs          (npm run setup calls it)
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const REDIS6_DIR = join(ROOT, '.cache', 'redis-6');
/** What the tests start (test/harness/redis6.ts looks here). */
export const REDIS6_BIN = join(REDIS6_DIR, 'bin', 'redis-server');

const KEYRING = '/usr/share/keyrings/debian-archive-keyring.gpg';
/** deb.debian.org serves bullseye until its LTS ends; then archive.debian.org does (with expired Release dates). */
const MIRRORS = [
  { main: 'http://deb.debian.org/debian', security: 'http://deb.debian.org/debian-security', archived: false },
  { main: 'http://archive.debian.org/debian', security: 'http://archive.debian.org/debian-security', archived: true },
];
/** The server binary, and what it links that a bookworm machine may lack (libc6, libsystemd0 it has). */
const PACKAGES = ['redis-tools', 'libssl1.1', 'liblua5.1-0', 'lua-bitop', 'lua-cjson', 'libjemalloc2', 'liblzf1', 'libatomic1'];

function sh(command, args, options = {}) {
  return spawnSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000, ...options });
}

/** The binary's version if it runs and is a 6.x, else undefined. */
export function redis6Version(bin = REDIS6_BIN) {
  if (!existsSync(bin)) return undefined;
  const result = sh(bin, ['--version']);
  const version = /v=(6\.[\d.]+)/.exec(result.stdout ?? '')?.[1];
  return result.status === 0 ? version : undefined;
}

function fetchPackages(work, mirror) {
  const apt = join(work, 'apt');
  rmSync(apt, { recursive: true, force: true });
  for (const dir of ['lists/partial', 'cache/archives/partial', 'preferences.d']) mkdirSync(join(apt, dir), { recursive: true });
  writeFileSync(
    join(apt, 'sources.list'),
    `deb [signed-by=${KEYRING}] ${mirror.main} bullseye main\n` + `deb [signed-by=${KEYRING}] ${mirror.security} bullseye-security main\n`,
  );
  writeFileSync(join(apt, 'status'), ''); // nothing "installed": the candidates are bullseye's, not the system's newer ones
  const options = [
    `Dir::Etc::SourceList=${join(apt, 'sources.list')}`,
    'Dir::Etc::SourceParts=/dev/null',
    `Dir::Etc::PreferencesParts=${join(apt, 'preferences.d')}`,
    'Dir::Etc::Preferences=/dev/null',
    `Dir::State::Lists=${join(apt, 'lists')}`,
    `Dir::State::status=${join(apt, 'status')}`,
    `Dir::Cache=${join(apt, 'cache')}`,
    'Acquire::http::Timeout=20',
    'Acquire::Retries=1',
    ...(mirror.archived ? ['Acquire::Check-Valid-Until=false'] : []),
    ...(process.getuid?.() === 0 ? ['APT::Sandbox::User=root'] : []),
  ].flatMap((option) => ['-o', option]);
  const update = sh('apt-get', ['-qq', ...options, 'update']);
  // An unreachable mirror is only a warning to apt-get update (exit 0): take any warning as failure.
  const warning = /^[EW]: .*$/m.exec(update.stderr ?? '')?.[0];
  if (update.status !== 0 || warning) return `apt-get update against ${mirror.main} failed: ${warning ?? lastLine(update)}`;
  const debs = join(work, 'debs');
  rmSync(debs, { recursive: true, force: true });
  mkdirSync(debs, { recursive: true });
  const download = sh('apt-get', ['-qq', ...options, 'download', ...PACKAGES], { cwd: debs });
  if (download.status !== 0) return `apt-get download from ${mirror.main} failed: ${lastLine(download)}`;
  return undefined;
}

function lastLine(result) {
  const text = `${result.stderr ?? ''}\n${result.stdout ?? ''}`.trim() || String(result.error?.message ?? `exit ${result.status}`);
  return text.split('\n').filter(Boolean).at(-1);
}

/** The directory under `root` that holds libssl.so.1.1 (usr/lib/<multiarch triplet>). */
function libraryDir(root) {
  const usrLib = join(root, 'usr', 'lib');
  for (const entry of readdirSync(usrLib, { withFileTypes: true })) {
    if (entry.isDirectory() && existsSync(join(usrLib, entry.name, 'libssl.so.1.1'))) return join(usrLib, entry.name);
  }
  throw new Error('libssl.so.1.1 is not in the unpacked packages');
}

function install() {
  if (!['apt-get', 'dpkg'].every((command) => sh('sh', ['-c', `command -v ${command}`]).status === 0)) {
    return 'needs apt-get and dpkg (Debian or Ubuntu)';
  }
  if (!existsSync(KEYRING)) return `needs Debian's archive keyring (${KEYRING}, package debian-archive-keyring)`;
  const work = join(REDIS6_DIR, 'download');
  const failures = [];
  let fetched = false;
  for (const mirror of MIRRORS) {
    const failure = fetchPackages(work, mirror);
    if (!failure) {
      fetched = true;
      break;
    }
    failures.push(failure);
  }
  if (!fetched) return failures.join('; ');
  const root = join(REDIS6_DIR, 'root');
  rmSync(root, { recursive: true, force: true });
  for (const deb of readdirSync(join(work, 'debs')).filter((name) => name.endsWith('.deb'))) {
    const unpack = sh('dpkg', ['-x', join(work, 'debs', deb), root]);
    if (unpack.status !== 0) return `dpkg -x ${deb} failed: ${lastLine(unpack)}`;
  }
  // Debian's redis-server package only links /usr/bin/redis-server to this binary, which picks its
  // role from the name it is started under.
  symlinkSync('redis-check-rdb', join(root, 'usr', 'bin', 'redis-server'));
  const libs = relative(dirname(REDIS6_BIN), libraryDir(root));
  const server = relative(dirname(REDIS6_BIN), join(root, 'usr', 'bin', 'redis-server'));
  mkdirSync(dirname(REDIS6_BIN), { recursive: true });
  writeFileSync(
    REDIS6_BIN,
    '#!/bin/sh\n# Redis 6 for the compatibility tests (made by scripts/setup-redis6.mjs).\n' +
      'here=$(dirname "$(readlink -f "$0")")\n' +
      `LD_LIBRARY_PATH="$here/${libs}\${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/${server}" "$@"\n`,
  );
  chmodSync(REDIS6_BIN, 0o755);
  rmSync(work, { recursive: true, force: true });
  return redis6Version() ? undefined : `the unpacked binary does not run: ${lastLine(sh(REDIS6_BIN, ['--version']))}`;
}

/** Makes sure .cache/redis-6 holds a working Redis 6; prints one line either way; never throws. */
export function setupRedis6() {
  const cached = redis6Version();
  if (cached) {
    console.log(`[setup] Redis ${cached} for the compatibility tests: cached in .cache/redis-6`);
    return true;
  }
  const started = performance.now();
  let problem;
  try {
    rmSync(REDIS6_DIR, { recursive: true, force: true });
    problem = install();
  } catch (error) {
    problem = error.message;
  }
  if (problem) {
    rmSync(REDIS6_DIR, { recursive: true, force: true });
    console.log(`[setup] Redis 6 for the compatibility tests is not available (${problem}); those tests will report themselves skipped.`);
    return false;
  }
  console.log(
    `[setup] Redis ${redis6Version()} for the compatibility tests: Debian bullseye's binary in .cache/redis-6 (${((performance.now() - started) / 1000).toFixed(1)} s)`,
  );
  return true;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) setupRedis6();
