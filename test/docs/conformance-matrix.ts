import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { SERVERS } from '../../scripts/servers.mjs';
import { ROOT } from '../package/packed-library.js';

/**
 * What the conformance suite (test/conformance) runs, read from its spec files themselves: each is
 * imported with Jest's `describe`/`it` replaced by recorders, so that it registers its runs without
 * running them, and each top-level `lock conformance...` block is one run. Its title says what the
 * run is (lock-conformance.ts writes it):
 *
 *   lock conformance[ core]: <mode>[ (<settings>)][ on <server>][ through <client>][ under <runtime>]
 *   lock conformance core on <server id>            (a server set-up could not fetch: skipped)
 *
 * No `on <server>`: the system's redis-server; no `through <client>`: ioredis (the library's own
 * connections); no `under <runtime>`: Node.js. The mode `memory` is the in-memory store of
 * `nestjs-distributed-lock/testing`, which needs no server and no client.
 */
export interface ConformanceRun {
  /** The spec file, relative to the repository. */
  file: string;
  title: string;
  /** `system` (the redis-server on PATH), `<product> <version>` of scripts/servers.mjs, or `memory`. */
  server: string;
  /** The client library's name as client-drivers.ts gives it (`ioredis`, `node-redis`), or `none`. */
  client: string;
  runtime: string;
  /** The deployment mode, `one process` for the in-memory store; undefined when the server is missing (skipped). */
  mode: string | undefined;
  suite: 'full' | 'core';
  /** Tests the run registers (skipped ones not counted). */
  tests: number;
}

interface Block {
  title: string;
  tests: number;
  children: Block[];
}

/** Jest's registration functions, recording what is registered instead. */
function recorders(root: Block): Record<string, unknown> {
  const stack = [root];
  const describe = (title: string, define: () => void): void => {
    const block: Block = { title, tests: 0, children: [] };
    stack.at(-1)!.children.push(block);
    stack.push(block);
    try {
      define();
    } finally {
      stack.pop();
    }
  };
  const test = (): void => {
    for (const block of stack) block.tests += 1;
  };
  const skipped = (): void => undefined;
  const each = (register: () => void) => (table: readonly unknown[]) => (): void => {
    table.forEach(() => register());
  };
  const it = Object.assign((..._args: unknown[]) => test(), { skip: skipped, todo: skipped, only: test, each: each(test), concurrent: test });
  const describeAll = Object.assign(describe, {
    skip: skipped,
    only: describe,
    each: (table: readonly unknown[]) => (title: string, define: (...args: unknown[]) => void) => table.forEach(() => describe(title, define)),
  });
  const hook = (): void => undefined;
  return { describe: describeAll, it, test: it, beforeAll: hook, afterAll: hook, beforeEach: hook, afterEach: hook };
}

/** Every spec file under test/conformance, relative to it. */
function specFiles(dir = join(ROOT, 'test/conformance')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return specFiles(path);
    return entry.name.endsWith('.e2e-spec.ts') ? [path] : [];
  });
}

const RUN_TITLE = /^lock conformance( core)?(?:: (.+)| on (\S+))$/;
const RUN_PARTS = /^(\S+)(?: \(([^)]*)\))?(?: on (.+?))?(?: through (\S+))?(?: under (.+))?$/;

/** `Redis 6.0` for the label `Redis 6.0.16` or the id `redis-6.0`: the line scripts/servers.mjs names. */
function serverLine(labelOrId: string): string {
  const entry = SERVERS.find(
    (server) => server.id === labelOrId || labelOrId === `${server.product} ${server.version}` || labelOrId.startsWith(`${server.product} ${server.version}.`),
  );
  if (!entry) throw new Error(`a conformance run names the server "${labelOrId}", which scripts/servers.mjs does not list`);
  return `${entry.product} ${entry.version}`;
}

/** One run from its title; throws when the title does not read as one (see the grammar above). */
export function parseRun(file: string, title: string, tests: number): ConformanceRun {
  const run = RUN_TITLE.exec(title);
  if (!run) throw new Error(`${file}: "${title}" is not the title of a conformance run`);
  const suite = run[1] ? 'core' : 'full';
  if (run[3]) return { file, title, server: serverLine(run[3]), client: 'ioredis', runtime: 'Node.js', mode: undefined, suite, tests };
  const parts = RUN_PARTS.exec(run[2]!);
  if (!parts) throw new Error(`${file}: "${title}" does not read as <mode>[ (settings)][ on <server>][ through <client>][ under <runtime>]`);
  const [, mode, , server, client, runtime] = parts;
  const memory = mode === 'memory';
  return {
    file,
    title,
    server: memory ? 'memory' : server ? serverLine(server) : 'system',
    client: memory ? 'none' : (client ?? 'ioredis'),
    runtime: runtime ?? 'Node.js',
    mode: memory ? 'one process' : mode,
    suite,
    tests,
  };
}

/**
 * Every run of the conformance suite, from its spec files. Jest's globals are replaced while the files
 * are imported and put back after; the files' modules stay loaded in this test file's registry.
 */
export async function conformanceRuns(): Promise<ConformanceRun[]> {
  const runs: ConformanceRun[] = [];
  const globals = globalThis as unknown as Record<string, unknown>;
  for (const path of specFiles()) {
    const root: Block = { title: '', tests: 0, children: [] };
    const replaced = recorders(root);
    const saved = Object.fromEntries(Object.keys(replaced).map((name) => [name, globals[name]]));
    Object.assign(globals, replaced);
    try {
      await import(`../conformance/${relative(join(ROOT, 'test/conformance'), path).replace(/\.ts$/, '.js')}`);
    } finally {
      Object.assign(globals, saved);
    }
    const file = relative(ROOT, path);
    for (const block of root.children) {
      if (block.title.startsWith('lock conformance')) runs.push(parseRun(file, block.title, block.tests));
    }
  }
  return runs;
}
