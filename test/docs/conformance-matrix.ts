import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { SERVERS } from '../../scripts/servers.mjs';
import { BUN_RUNTIME, bunSpecFiles } from '../bun/bun-specs.js';
import { ROOT } from '../package/packed-library.js';

/**
 * What the conformance suite runs, read from its spec files themselves: each is imported with Jest's
 * `describe`/`it` replaced by recorders, so that it registers its runs without running them, and each
 * top-level `lock conformance...` block is one run. Its title says what the run is (lock-conformance.ts
 * writes it):
 *
 *   lock conformance[ core]: <mode>[ (<settings>)][ on <server>][ through <client>][ under <runtime>]
 *   lock conformance[ core] on <server id>[ through <client>][ under <runtime>]   (a server set-up could not fetch: skipped)
 *
 * No `on <server>`: the system's redis-server; no `through <client>`: ioredis (the library's own
 * connections); no `under <runtime>`: Node.js. The mode `memory` is the in-memory store of
 * `nestjs-distributed-lock/testing`, which needs no server and no client.
 *
 * The spec files are those Jest runs under test/conformance (`*.e2e-spec.ts`) and those Bun's test
 * runner runs (test/bun/bun-specs.ts). Under Bun, lock-conformance.ts ends each title with
 * `under Bun <version>`; read here under Node.js the same file registers the titles without it, so the
 * recorder adds what Bun writes (the pinned Bun, which test/bun/bun-runtime.e2e-spec.ts checks is
 * the one that runs, along with every run's title and test count against runsOf()).
 */
export interface ConformanceRun {
  /** The spec file, relative to the repository. */
  file: string;
  title: string;
  /** `system` (the redis-server on PATH), `<product> <version>` of scripts/servers.mjs, or `memory`. */
  server: string;
  /** The client library as client-drivers.ts labels it (`ioredis`, `node-redis 6`, `Valkey GLIDE`), or `none`. */
  client: string;
  /** `Node.js`, or the runtime a title names (`Bun 1.4.5`). */
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

/** A spec file of the conformance suite, relative to the repository, and the runtime it runs under (Node.js when undefined). */
export interface SpecFile {
  file: string;
  runtime?: string;
}

/** Every spec file Jest runs under test/conformance. */
function jestSpecFiles(dir = join(ROOT, 'test/conformance')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return jestSpecFiles(path);
    return entry.name.endsWith('.e2e-spec.ts') ? [relative(ROOT, path)] : [];
  });
}

/** Every spec file that runs the conformance suite: Jest's on Node.js, and Bun's. */
export function specFiles(): SpecFile[] {
  return [...jestSpecFiles().map((file) => ({ file })), ...bunSpecFiles().map((file) => ({ file, runtime: BUN_RUNTIME }))];
}

const RUN_TITLE = /^lock conformance( core)?(?:: (.+)| on (.+))$/;
const RUN_PARTS = /^(\S+)(?: \(([^)]*)\))?(?: on (.+?))?(?: through (.+?))?(?: under (.+))?$/;
const SKIPPED_PARTS = /^(\S+)(?: through (.+?))?(?: under (.+))?$/;

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
  if (run[3]) {
    const skipped = SKIPPED_PARTS.exec(run[3]);
    if (!skipped) throw new Error(`${file}: "${title}" does not read as a skipped run: on <server id>[ through <client>][ under <runtime>]`);
    const [, id, client, runtime] = skipped;
    return { file, title, server: serverLine(id!), client: client ?? 'ioredis', runtime: runtime ?? 'Node.js', mode: undefined, suite, tests };
  }
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

/** The spec files read in this test file's module registry. */
const read = new Set<string>();

/**
 * The runs one spec file registers. Jest's globals are replaced while the file is imported and put
 * back after; its modules stay loaded in the calling test file's registry, so a file registers its
 * runs once only: asked again, it would register none (refused instead).
 */
export async function runsOf({ file, runtime }: SpecFile): Promise<ConformanceRun[]> {
  if (read.has(file)) throw new Error(`${file} was read already in this test file: its module registers its runs once only`);
  read.add(file);
  const root: Block = { title: '', tests: 0, children: [] };
  const globals = globalThis as unknown as Record<string, unknown>;
  const replaced = recorders(root);
  const saved = Object.fromEntries(Object.keys(replaced).map((name) => [name, globals[name]]));
  Object.assign(globals, replaced);
  try {
    await import(`../${relative(join(ROOT, 'test'), join(ROOT, file)).replace(/\.ts$/, '.js')}`);
  } finally {
    Object.assign(globals, saved);
  }
  return root.children
    .filter((block) => block.title.startsWith('lock conformance'))
    .map((block) => parseRun(file, runtime ? `${block.title} under ${runtime}` : block.title, block.tests));
}

/** Every run of the conformance suite, from its spec files (specFiles()). */
export async function conformanceRuns(): Promise<ConformanceRun[]> {
  const runs: ConformanceRun[] = [];
  for (const spec of specFiles()) runs.push(...(await runsOf(spec)));
  return runs;
}
