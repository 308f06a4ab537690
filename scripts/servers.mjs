// The servers the compatibility tests run besides the system's redis-server (which runs the whole
// conformance suite in every mode): which Debian package each comes from, and what it is expected to
// be. scripts/setup-servers.mjs fetches them into .cache/<id>/; test/harness/servers.ts finds them.
// Node built-ins only (set-up imports it before node_modules exists).
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * What a binary from trixie or forky links, all taken from its own suite: those suites' C library is
 * newer than the one a bookworm machine has, so the server runs on the suite's dynamic loader and
 * libraries, never on the system's (and the system's are never replaced). The list is what `ld.so
 * --list` shows for redis-server 8.0 and valkey-server 8.1 and 9.1, closed over their dependencies.
 */
const OWN_LIBC = ['libc6', 'libgcc-s1', 'libstdc++6', 'libssl3t64', 'libzstd1', 'zlib1g', 'libsystemd0', 'libcap2', 'libjemalloc2', 'liblzf1', 'libatomic1'];

/**
 * `version`: the release line expected (`--version` must start with it). `binary`: the file in the
 * package that is the server (Debian's redis-server and valkey-server packages only add a symlink
 * named `program` to it; it chooses its role from the name it runs under). `libc`: 'system' for a
 * suite older than the machine's (its binaries run on the system's C library, with the libraries the
 * system lacks beside them), 'suite' for a newer one (see OWN_LIBC). `shardedPubSub`: the server has
 * SPUBLISH/SSUBSCRIBE (Redis 7.0+, every Valkey), so a cluster of it gets sharded unlock notifications.
 */
export const SERVERS = [
  {
    id: 'redis-6.0',
    product: 'Redis',
    version: '6.0',
    suite: 'bullseye',
    program: 'redis-server',
    binary: 'redis-check-rdb',
    libc: 'system',
    shardedPubSub: false,
    // redis-tools holds the server binary; the rest is what it links that bookworm lacks or has newer.
    packages: ['redis-tools', 'libssl1.1', 'liblua5.1-0', 'lua-bitop', 'lua-cjson', 'libjemalloc2', 'liblzf1', 'libatomic1'],
  },
  {
    id: 'redis-8.0',
    product: 'Redis',
    version: '8.0',
    suite: 'trixie',
    program: 'redis-server',
    binary: 'redis-check-rdb',
    libc: 'suite',
    shardedPubSub: true,
    packages: ['redis-tools', ...OWN_LIBC],
  },
  {
    id: 'valkey-8.1',
    product: 'Valkey',
    version: '8.1',
    suite: 'trixie',
    program: 'valkey-server',
    binary: 'valkey-check-rdb',
    libc: 'suite',
    shardedPubSub: true,
    packages: ['valkey-tools', ...OWN_LIBC],
  },
  {
    id: 'valkey-9',
    product: 'Valkey',
    version: '9',
    suite: 'forky',
    program: 'valkey-server',
    binary: 'valkey-check-rdb',
    libc: 'suite',
    shardedPubSub: true,
    packages: ['valkey-tools', ...OWN_LIBC],
  },
];

/** Where set-up puts a server, and the wrapper the tests start. */
export function serverDir(server) {
  return join(ROOT, '.cache', server.id);
}

export function serverBin(server) {
  return join(serverDir(server), 'bin', server.program);
}

/** The version a `--version` line names if it is `server`'s product and release line, else undefined. */
export function matchVersion(server, output) {
  const match = /^(\w+) server v=(\d+\.\d+\.\d+)/m.exec(output ?? '');
  if (!match || match[1] !== server.product || !match[2].startsWith(`${server.version}.`)) return undefined;
  return match[2];
}
