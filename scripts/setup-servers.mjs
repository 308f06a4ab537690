#!/usr/bin/env node
// The servers for the compatibility tests (scripts/servers.mjs: Redis 6.0, Redis 8.0, Valkey 8.1,
// Valkey 9), next to the system's redis-server, never instead of it: Debian's packages from the suite
// that has each version, unpacked with `dpkg -x` into .cache/<id>/ and started through a wrapper,
// .cache/<id>/bin/<program>. A binary from a suite newer than the machine runs on that suite's own
// dynamic loader and C library (`ld-linux-x86-64.so.2 --library-path <its libraries> <binary>`); one
// from an older suite on the system's, with LD_LIBRARY_PATH for what the system lacks. apt-get runs
// with a private source list, package state and cache, so the system's apt state is neither read nor
// changed, and it checks the archive's signatures with Debian's keyring (and the packages' hashes
// against the signed index). The suites are fetched in parallel, each index once for the servers it
// holds. Node built-ins only (it runs from setup.mjs). Cached: a second run only asks each binary for
// its version. Never fails set-up: a server it cannot fetch is named with the reason, and its tests
// report themselves skipped.
//
//   node scripts/setup-servers.mjs          (npm run setup calls it)
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { matchVersion, serverBin, serverDir, SERVERS } from './servers.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const KEYRING = '/usr/share/keyrings/debian-archive-keyring.gpg';
const DEBIAN = 'http://deb.debian.org/debian';
const SECURITY = 'http://deb.debian.org/debian-security';

/**
 * Each suite's sources, by mirror, tried in order. deb.debian.org serves bullseye until its LTS ends;
 * then archive.debian.org does (with expired Release dates). forky (testing) has no security suite
 * of its own: fixes reach it through unstable.
 */
const SUITES = {
  bullseye: [
    { sources: [`${DEBIAN} bullseye main`, `${SECURITY} bullseye-security main`] },
    { sources: ['http://archive.debian.org/debian bullseye main', 'http://archive.debian.org/debian-security bullseye-security main'], archived: true },
  ],
  trixie: [{ sources: [`${DEBIAN} trixie main`, `${SECURITY} trixie-security main`] }],
  forky: [{ sources: [`${DEBIAN} forky main`] }],
};

function sh(command, args, options = {}) {
  return new Promise((resolvePromise) => {
    execFile(command, args, { encoding: 'utf8', timeout: 180_000, maxBuffer: 16 << 20, ...options }, (error, stdout, stderr) => {
      resolvePromise({ status: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr, error });
    });
  });
}

function lastLine(result) {
  const text = `${result.stderr ?? ''}\n${result.stdout ?? ''}`.trim() || String(result.error?.message ?? `exit ${result.status}`);
  return text.split('\n').filter(Boolean).at(-1);
}

/** The server's version if its wrapper runs and is the release line expected, else undefined. */
async function installedVersion(server) {
  if (!existsSync(serverBin(server))) return undefined;
  const result = await sh(serverBin(server), ['--version'], { timeout: 20_000 });
  return result.status === 0 ? matchVersion(server, result.stdout) : undefined;
}

/** apt-get with its state, cache and sources in `apt` (a directory of its own); nothing of the system's but its configuration. */
function aptOptions(apt, mirror) {
  return [
    `Dir::Etc::SourceList=${join(apt, 'sources.list')}`,
    'Dir::Etc::SourceParts=/dev/null',
    `Dir::Etc::PreferencesParts=${join(apt, 'preferences.d')}`,
    'Dir::Etc::Preferences=/dev/null',
    `Dir::State::Lists=${join(apt, 'lists')}`,
    `Dir::State::status=${join(apt, 'status')}`,
    `Dir::Cache=${join(apt, 'cache')}`,
    'Acquire::Languages=none',
    'Acquire::http::Timeout=20',
    'Acquire::Retries=1',
    ...(mirror.archived ? ['Acquire::Check-Valid-Until=false'] : []),
    ...(process.getuid?.() === 0 ? ['APT::Sandbox::User=root'] : []),
  ].flatMap((option) => ['-o', option]);
}

/** Downloads `packages` of `suite` into `debs` (the newest version its sources hold); a problem, or undefined. */
async function download(work, suite, packages, debs) {
  const failures = [];
  for (const mirror of SUITES[suite]) {
    const apt = join(work, 'apt');
    rmSync(apt, { recursive: true, force: true });
    for (const dir of ['lists/partial', 'cache/archives/partial', 'preferences.d']) mkdirSync(join(apt, dir), { recursive: true });
    writeFileSync(join(apt, 'sources.list'), mirror.sources.map((source) => `deb [signed-by=${KEYRING}] ${source}\n`).join(''));
    writeFileSync(join(apt, 'status'), ''); // nothing "installed": the candidates are the suite's, not the system's
    const options = aptOptions(apt, mirror);
    const update = await sh('apt-get', ['-qq', ...options, 'update']);
    // An unreachable mirror, or a signature apt cannot check, is only a warning to apt-get update (exit 0): take any warning as failure.
    const warning = /^[EW]: .*$/m.exec(update.stderr ?? '')?.[0];
    if (update.status !== 0 || warning) {
      failures.push(`apt-get update of ${suite} from ${mirror.sources[0].split(' ')[0]} failed: ${warning ?? lastLine(update)}`);
      continue;
    }
    rmSync(debs, { recursive: true, force: true });
    mkdirSync(debs, { recursive: true });
    const fetched = await sh('apt-get', ['-qq', ...options, 'download', ...packages], { cwd: debs });
    if (fetched.status === 0) return undefined;
    failures.push(`apt-get download of ${suite}'s ${packages.join(' ')} failed: ${lastLine(fetched)}`);
  }
  return failures.join('; ');
}

/** The multiarch library directories under `root` (lib/<triplet>, usr/lib/<triplet>). */
function libraryDirs(root) {
  return ['lib', 'usr/lib']
    .map((dir) => join(root, dir))
    .filter((dir) => existsSync(dir))
    .flatMap((dir) =>
      readdirSync(dir, { withFileTypes: true })
        .filter((entry) => entry.isDirectory() && /-linux-gnu/.test(entry.name))
        .map((entry) => join(dir, entry.name)),
    );
}

/** Unpacks `server`'s packages from `debs` into .cache/<id>/ and writes its wrapper; a problem, or undefined. */
async function unpack(server, debs) {
  const dir = serverDir(server);
  const root = join(dir, 'root');
  const files = readdirSync(debs);
  mkdirSync(root, { recursive: true });
  for (const name of server.packages) {
    const deb = files.find((file) => file.startsWith(`${name}_`) && file.endsWith('.deb'));
    if (!deb) return `apt-get download gave no ${name} package`;
    const unpacked = await sh('dpkg', ['-x', join(debs, deb), root]);
    if (unpacked.status !== 0) return `dpkg -x ${deb} failed: ${lastLine(unpacked)}`;
  }
  rmSync(join(root, 'usr', 'bin', server.program), { force: true });
  symlinkSync(server.binary, join(root, 'usr', 'bin', server.program));
  const bin = serverBin(server);
  const fromBin = (path) => `"$here/${relative(dirname(bin), path)}"`;
  const libs = libraryDirs(root);
  const program = fromBin(join(root, 'usr', 'bin', server.program));
  let start;
  if (server.libc === 'suite') {
    const loader = libs.flatMap((lib) =>
      readdirSync(lib)
        .filter((file) => /^ld-linux.*\.so\.\d+$/.test(file))
        .map((file) => join(lib, file)),
    )[0];
    if (!loader) return `the unpacked libc6 has no dynamic loader (ld-linux*.so.*)`;
    // --library-path stands for LD_LIBRARY_PATH (which it then ignores): the suite's libraries first.
    const path = libs.map((lib) => `$here/${relative(dirname(bin), lib)}`).join(':');
    start = `exec ${fromBin(loader)} --library-path "${path}" ${program} "$@"`;
    const listed = await sh(loader, ['--library-path', libs.join(':'), '--list', join(root, 'usr', 'bin', server.binary)]);
    const missing = (listed.stdout ?? '').split('\n').filter((line) => line.includes('not found'));
    if (missing.length) return `the unpacked server lacks libraries: ${missing.map((line) => line.trim()).join(', ')}`;
  } else {
    const path = libs.map((lib) => `$here/${relative(dirname(bin), lib)}`).join(':');
    start = `LD_LIBRARY_PATH="${path}\${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec ${program} "$@"`;
  }
  mkdirSync(dirname(bin), { recursive: true });
  writeFileSync(
    bin,
    `#!/bin/sh\n# ${server.product} ${server.version} for the compatibility tests: Debian ${server.suite}'s binary (made by scripts/setup-servers.mjs).\n` +
      'here=$(dirname "$(readlink -f "$0")")\n' +
      `${start}\n`,
  );
  chmodSync(bin, 0o755);
  if (await installedVersion(server)) return undefined;
  const ran = await sh(bin, ['--version']);
  // A suite that moved on to another release line (forky after Valkey 9) lands here too.
  return `the unpacked ${server.packages[0]} is not ${server.product} ${server.version}.x or does not run (--version: ${lastLine(ran)})`;
}

async function prerequisites() {
  for (const command of ['apt-get', 'dpkg']) {
    if ((await sh('sh', ['-c', `command -v ${command}`])).status !== 0) return 'needs apt-get and dpkg (Debian or Ubuntu)';
  }
  if (!existsSync(KEYRING)) return `needs Debian's archive keyring (${KEYRING}, package debian-archive-keyring)`;
  return undefined;
}

/** Fetches every server of `suite` (none of them cached): its line for each. */
async function setupSuite(suite, servers, problem) {
  const started = performance.now();
  const work = join(ROOT, '.cache', 'download', suite);
  const failures = new Map();
  try {
    for (const server of servers) rmSync(serverDir(server), { recursive: true, force: true });
    problem ??= await download(work, suite, [...new Set(servers.flatMap((server) => server.packages))], join(work, 'debs'));
    for (const server of servers) failures.set(server, problem ?? (await unpack(server, join(work, 'debs')).catch((error) => error.message)));
  } catch (error) {
    for (const server of servers) if (!failures.has(server)) failures.set(server, error.message);
  } finally {
    rmSync(work, { recursive: true, force: true });
    if (existsSync(dirname(work)) && readdirSync(dirname(work)).length === 0) rmSync(dirname(work), { recursive: true });
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  return Promise.all(
    servers.map(async (server) => {
      const failure = failures.get(server);
      if (!failure) {
        const version = await installedVersion(server);
        return [
          server,
          `${server.product} ${version} for the compatibility tests: Debian ${suite}'s ${server.packages[0]} in .cache/${server.id} (${seconds} s)`,
        ];
      }
      rmSync(serverDir(server), { recursive: true, force: true });
      return [
        server,
        `${server.product} ${server.version} for the compatibility tests is not available (${failure}); its tests will report themselves skipped.`,
      ];
    }),
  );
}

/** Makes sure .cache/<id>/ holds each server of scripts/servers.mjs; prints one line per server; never throws. */
export async function setupServers() {
  try {
    return await fetchServers();
  } catch (error) {
    console.log(`[setup] the servers for the compatibility tests could not be set up (${error.message}); their tests will report themselves skipped.`);
    return false;
  }
}

async function fetchServers() {
  // .cache/redis-6 was made by the script this one replaces (Redis 6 now lives in .cache/redis-6.0).
  rmSync(join(ROOT, '.cache', 'redis-6'), { recursive: true, force: true });
  const lines = new Map();
  const missing = [];
  await Promise.all(
    SERVERS.map(async (server) => {
      const version = await installedVersion(server);
      if (version) lines.set(server, `${server.product} ${version} for the compatibility tests: cached in .cache/${server.id}`);
      else missing.push(server);
    }),
  );
  if (missing.length) {
    const problem = await prerequisites();
    const suites = [...new Set(missing.map((server) => server.suite))];
    const done = await Promise.all(
      suites.map((suite) =>
        setupSuite(
          suite,
          missing.filter((server) => server.suite === suite),
          problem,
        ),
      ),
    );
    for (const [server, line] of done.flat()) lines.set(server, line);
  }
  for (const server of SERVERS) console.log(`[setup] ${lines.get(server)}`);
  return SERVERS.every((server) => !missing.includes(server) || existsSync(serverBin(server)));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await setupServers();
