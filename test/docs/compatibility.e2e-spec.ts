import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../package/packed-library.js';
import { conformanceRuns, parseRun, type ConformanceRun } from './conformance-matrix.js';
import { tableWithHeader, type MarkdownTable } from './markdown-tables.js';

const PAGE = 'docs/operations/compatibility.md';
const COLUMNS = ['Server', 'Client', 'Runtime', 'Modes', 'Suite'] as const;

/** What a row is about, as the key of the runs it stands for. */
function rowKey(cells: string[]): string {
  const [server, client, runtime, , suite] = cells.map((cell) => cell.replace(/`/g, ''));
  const serverKey = /the system's/.test(server!) ? 'system' : /in-memory store/.test(server!) ? 'memory' : /^\S+ \S+/.exec(server!)![0].replace(/,$/, '');
  // A client or runtime is named with its version where the runs name one (`node-redis 6`, `Bun 1.4.5`); a remark may follow a comma.
  const named = (cell: string): string => cell.split(',')[0]!.trim();
  const first = (cell: string): string => cell.split(/[\s,]/)[0]!;
  return [serverKey, named(client!), named(runtime!), first(suite!)].join(' | ');
}

const runKey = (run: ConformanceRun): string => [run.server, run.client, run.runtime, run.suite].join(' | ');

/** `Redis 7.0` for the redis-server on PATH, which the runs without a server of their own use. */
function systemServerLine(): string {
  const version = /v=(\d+\.\d+)/.exec(execFileSync('redis-server', ['--version'], { encoding: 'utf8' }))?.[1];
  return `Redis ${version}`;
}

/**
 * Where the table and the runs differ: a run (server, client, runtime, suite) without its row, a row
 * no run stands for, or other modes; empty when they agree.
 */
function matrixProblems(runs: ConformanceRun[], table: MarkdownTable, systemServer: string): string[] {
  const problems: string[] = [];
  const ran = new Map<string, { modes: Set<string>; unknown: boolean; files: Set<string> }>();
  for (const run of runs) {
    if (run.mode !== undefined && run.tests === 0) problems.push(`${run.file}: "${run.title}" registers no test`);
    const entry = ran.get(runKey(run)) ?? { modes: new Set<string>(), unknown: false, files: new Set<string>() };
    if (run.mode === undefined) entry.unknown = true;
    else entry.modes.add(run.mode);
    entry.files.add(run.file);
    ran.set(runKey(run), entry);
  }
  const rows = new Map<string, Set<string>>();
  for (const cells of table.rows) {
    const key = rowKey(cells);
    if (rows.has(key)) problems.push(`${PAGE} has two rows for ${key}`);
    rows.set(key, new Set(cells[3]!.split(',').map((mode) => mode.trim())));
    if (key.startsWith('system |') && !cells[0]!.startsWith(systemServer)) {
      problems.push(`${PAGE}: the system's redis-server is ${systemServer} here, the row says "${cells[0]}"`);
    }
  }
  for (const [key, { modes, unknown, files }] of ran) {
    const row = rows.get(key);
    const said = [...modes].sort().join(', ');
    if (!row)
      problems.push(`the conformance suite runs ${key} (${said || 'modes unknown: server missing'}; ${[...files].join(', ')}), and ${PAGE} has no row for it`);
    else if (!unknown && [...row].sort().join(', ') !== said)
      problems.push(`${key}: ${PAGE} says ${[...row].sort().join(', ')}, the conformance suite runs ${said}`);
  }
  for (const key of rows.keys()) {
    if (!ran.has(key)) problems.push(`${PAGE} has a row for ${key}, which no spec file of the conformance suite runs`);
  }
  return problems;
}

/**
 * The compatibility table of the docs (servers x clients x runtimes) is what the conformance suite
 * runs, read from its spec files (conformance-matrix.ts): adding a client or a runtime is its spec
 * file plus one row. Runs on a server set-up could not fetch are skipped runs: their row must be
 * there, their modes cannot be read.
 */
describe(`the compatibility table (${PAGE})`, () => {
  let runs: ConformanceRun[];
  let table: MarkdownTable;
  const system = systemServerLine();

  beforeAll(async () => {
    runs = await conformanceRuns();
    table = tableWithHeader(readFileSync(join(ROOT, PAGE), 'utf8'), COLUMNS, PAGE);
  }, 120_000);

  it('has one row per server, client, runtime and suite the conformance suite runs, with its modes', () => {
    expect(runs.length).toBeGreaterThan(10);
    expect(matrixProblems(runs, table, system)).toEqual([]);
  });

  it('control: a row taken out (a client of Node.js, a runtime), a row no run stands for and a mode too many are each reported', () => {
    const rowOf = (key: string): number => table.rows.findIndex((cells) => rowKey(cells) === key);
    for (const [key, pattern] of [
      ['system | node-redis 6 | Node.js | core', /runs system \| node-redis 6 \| Node\.js \| core \(cluster, sentinel; .* has no row for it/],
      [
        'system | ioredis | Bun 1.4.5 | core',
        /runs system \| ioredis \| Bun 1\.4\.5 \| core \(single; test\/bun\/conformance-core\.bun\.spec\.ts\), .* has no row for it/,
      ],
    ] as const) {
      const row = rowOf(key);
      expect(row).toBeGreaterThanOrEqual(0);
      const without = { ...table, rows: table.rows.filter((_, i) => i !== row) };
      expect(matrixProblems(runs, without, system)).toEqual([expect.stringMatching(pattern)]);
    }

    const extra = { ...table, rows: [...table.rows, ['Redis 7.2', 'ioredis', 'Node.js', 'single', 'core']] };
    expect(matrixProblems(runs, extra, system)).toEqual([expect.stringMatching(/row for Redis 7\.2 \| ioredis \| Node\.js \| core, which no spec file/)]);

    const row = rowOf('system | node-redis 6 | Node.js | core');
    const moreModes = { ...table, rows: table.rows.map((cells, i) => (i === row ? [...cells.slice(0, 3), 'cluster, sentinel, single', cells[4]!] : cells)) };
    expect(matrixProblems(runs, moreModes, system)).toEqual([
      expect.stringMatching(/says cluster, sentinel, single, the conformance suite runs cluster, sentinel/),
    ]);
  });
});

describe('the titles of conformance runs (conformance-matrix.ts)', () => {
  const file = 'test/conformance/example.e2e-spec.ts';
  const read = (title: string) => {
    const { server, client, runtime, mode, suite } = parseRun(file, title, 1);
    return { server, client, runtime, mode, suite };
  };

  it('reads each part, clients and runtimes of more than one word included', () => {
    expect(read('lock conformance: cluster')).toEqual({ server: 'system', client: 'ioredis', runtime: 'Node.js', mode: 'cluster', suite: 'full' });
    expect(read('lock conformance core: cluster through node-redis 6')).toEqual({
      server: 'system',
      client: 'node-redis 6',
      runtime: 'Node.js',
      mode: 'cluster',
      suite: 'core',
    });
    expect(read('lock conformance core: single on Valkey 9.0.0 through Valkey GLIDE')).toEqual({
      server: 'Valkey 9',
      client: 'Valkey GLIDE',
      runtime: 'Node.js',
      mode: 'single',
      suite: 'core',
    });
    expect(read('lock conformance core: single through node-redis 6 under Bun 1.4.5')).toMatchObject({ client: 'node-redis 6', runtime: 'Bun 1.4.5' });
    expect(read('lock conformance core: single under Bun 1.4.5')).toMatchObject({ client: 'ioredis', runtime: 'Bun 1.4.5' });
    expect(read('lock conformance: memory (strict keys throw, one slot per script)')).toMatchObject({ server: 'memory', client: 'none', mode: 'one process' });
    // Skipped: the server's id, no mode.
    expect(read('lock conformance core on valkey-9 through Valkey GLIDE')).toEqual({
      server: 'Valkey 9',
      client: 'Valkey GLIDE',
      runtime: 'Node.js',
      mode: undefined,
      suite: 'core',
    });
  });

  it('control: a title that does not read as a run, or names a server scripts/servers.mjs does not list, is refused', () => {
    expect(() => read('lock conformance core: single through')).toThrow(/does not read as <mode>/);
    expect(() => read('lock conformance core: single on Redis 7.2.4')).toThrow(/scripts\/servers\.mjs does not list/);
    expect(() => read('lock conformance core')).toThrow(/is not the title of a conformance run/);
  });
});
