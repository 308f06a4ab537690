import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withServer } from '../harness/servers.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Run {
  round: number;
  status: string;
  metrics?: Record<string, number>;
}
interface Row {
  id: string;
  status: 'ok' | 'could-not-run' | 'failed';
  reason?: string;
  runs: Run[];
}
interface ServerResult {
  id: string;
  version: string;
  scenarios: { scenario: string; rows: Row[] }[];
  targets: { id: string; met: boolean | null }[];
  comparisons: { scenario: string; metric: string; ours: { median: number } | null; peer: { id: string; median: number } | null; ratio: number | null }[];
}
interface Report {
  schema: number;
  machine: { cpu: string; cores: number; node: string; redis: string };
  command: string;
  libraries: { id: string; scenarios: string[]; settings: Record<string, unknown> }[];
  servers: ServerResult[];
  failures: string[];
}

function runBench(args: string[], timeout: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [join(ROOT, 'dist/bench/main.js'), ...args], { cwd: ROOT, timeout }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

/** Shape and correctness only: timings depend on the host and are never asserted. */
describe('npm run bench -- --short (the CI form of the benchmark)', () => {
  let out: string;
  let run: { code: number | null; stdout: string; stderr: string };
  let report: Report;
  let server: ServerResult;

  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), 'dlock-bench-'));
    run = await runBench(['--short', '--out', out], 110_000);
    report = JSON.parse(readFileSync(join(out, 'latest.json'), 'utf8')) as Report;
    server = report.servers[0]!;
  }, 120_000);

  afterAll(() => {
    rmSync(out, { recursive: true, force: true });
  });

  it('exits 0 and writes the JSON, Markdown and SVG results with the machine and the command', () => {
    expect({ code: run.code, failures: report.failures }).toEqual({ code: 0, failures: [] });
    expect(report.machine.cores).toBeGreaterThan(0);
    // --short runs on the system's redis-server alone (CI time); a full run adds Valkey 9 when set-up fetched it.
    expect({ schema: report.schema, servers: report.servers.map((s) => s.id) }).toEqual({ schema: 2, servers: ['redis'] });
    expect(server.version).toMatch(/^Redis \d+\.\d+/);
    expect(report.machine.redis).toBe(server.version);
    expect(report.command).toContain('--short');
    const markdown = readFileSync(join(out, 'latest.md'), 'utf8');
    expect(markdown).toContain('## Targets');
    expect(readFileSync(join(out, 'latest.svg'), 'utf8')).toMatch(/^<svg[\s\S]*<\/svg>\n$/);
    expect(run.stderr).not.toMatch(/Unhandled|ERR_/);
  });

  it('has a row for every library in every scenario it takes part in, run or marked could-not-run with a reason', () => {
    const peers = [
      'raw',
      'ours',
      'redlock',
      'sesame-redlock',
      'redis-semaphore',
      'redlock-universal',
      'node-redisson',
      'ours-semaphore',
      'redis-semaphore-semaphore',
    ];
    expect(report.libraries.map((l) => l.id)).toEqual(expect.arrayContaining(peers));
    for (const library of report.libraries) {
      expect(Object.keys(library.settings).length).toBeGreaterThan(0);
      for (const scenario of library.scenarios) {
        const row = server.scenarios.find((s) => s.scenario === scenario)?.rows.find((r) => r.id === library.id);
        expect({ scenario, id: library.id, present: row !== undefined }).toEqual({ scenario, id: library.id, present: true });
        if (row!.status === 'could-not-run') expect(row!.reason).toMatch(/\S/);
        else
          expect({ scenario, id: library.id, status: row!.status, ran: row!.runs.every((r) => r.metrics !== undefined) }).toEqual({
            scenario,
            id: library.id,
            status: 'ok',
            ran: true,
          });
      }
    }
    // Our library and the baseline always run.
    for (const scenario of ['serial', 'parallel', 'contended']) {
      for (const id of ['raw', 'ours']) {
        expect(server.scenarios.find((s) => s.scenario === scenario)!.rows.find((r) => r.id === id)!.status).toBe('ok');
      }
    }
    const decorator = server.scenarios.find((s) => s.scenario === 'decorator')!;
    expect(decorator.rows.map((r) => [r.id, r.status])).toEqual([
      ['plain', 'ok'],
      ['locked', 'ok'],
      ['watchdog', 'ok'],
    ]);
  });

  it('loses no update under contention with our locks or the raw baseline, and counts every section', () => {
    const contended = server.scenarios.find((s) => s.scenario === 'contended')!;
    for (const row of contended.rows.filter((r) => r.id === 'raw' || r.id.startsWith('ours'))) {
      if (row.status === 'could-not-run') continue;
      for (const r of row.runs) {
        expect({ id: row.id, lost: r.metrics!.lostUpdates, counted: r.metrics!.sections === r.metrics!.counter }).toEqual({
          id: row.id,
          lost: 0,
          counted: true,
        });
        expect(r.metrics!.sections).toBeGreaterThan(0);
      }
    }
  });

  it("runs our semaphore and redis-semaphore's side by side: never more permits in use than the size, and ratios of medians for each metric", () => {
    for (const scenario of ['serial', 'parallel', 'semaphore']) {
      expect(server.scenarios.find((s) => s.scenario === scenario)!.rows.find((r) => r.id === 'ours-semaphore')!.status).toBe('ok');
    }
    const semaphore = server.scenarios.find((s) => s.scenario === 'semaphore')!;
    expect(semaphore.rows.map((r) => r.id)).toEqual(['ours-semaphore', 'redis-semaphore-semaphore']);
    for (const r of semaphore.rows.find((row) => row.id === 'ours-semaphore')!.runs) {
      expect({ overPermits: r.metrics!.overPermits, withinPermits: r.metrics!.maxInUse! <= r.metrics!.permits! }).toEqual({
        overPermits: 0,
        withinPermits: true,
      });
      expect(r.metrics!.sections).toBeGreaterThan(0);
    }
    expect(server.comparisons.map((c) => `${c.scenario}/${c.metric}`)).toEqual([
      'serial/p50Ms',
      'serial/cyclesPerSec',
      'parallel/cyclesPerSec',
      'semaphore/sectionsPerSec',
      'semaphore/p50WaitMs',
      'semaphore/p99WaitMs',
    ]);
    for (const comparison of server.comparisons) {
      expect(comparison.peer?.id).toBe('redis-semaphore-semaphore');
      expect(comparison.ratio).toBeCloseTo(comparison.ours!.median / comparison.peer!.median, 6);
    }
    expect(readFileSync(join(out, 'latest.md'), 'utf8')).toContain('## Semaphores side by side');
  });

  it('judges every target (met or not; no timing is asserted here)', () => {
    expect(server.targets.map((t) => t.id)).toEqual([
      'contended-throughput',
      'contended-p99-wait',
      'serial-p50',
      'serial-p99',
      'parallel-throughput',
      'decorator-overhead',
    ]);
    for (const target of server.targets) expect(typeof target.met).toBe('boolean');
  });
});

const BY_SERVER = 'npm run bench -- --servers redis,valkey-9 (rows per server)';
withServer('valkey-9', BY_SERVER, (valkey) => {
  describe(BY_SERVER, () => {
    let out: string;
    let run: { code: number | null; stdout: string; stderr: string };
    let report: Report;

    beforeAll(async () => {
      out = mkdtempSync(join(tmpdir(), 'dlock-bench-'));
      // The bench finds Valkey 9 as the harness does (where set-up put it, or SERVER_BIN_VALKEY_9, inherited).
      run = await runBench(
        ['--short', '--servers', 'redis,valkey-9', '--only', 'raw,ours,redis-semaphore', '--scenarios', 'serial,parallel', '--out', out],
        60_000,
      );
      report = JSON.parse(readFileSync(join(out, 'latest.json'), 'utf8')) as Report;
    }, 70_000);

    afterAll(() => {
      rmSync(out, { recursive: true, force: true });
    });

    it('runs every scenario on each server in the order named, with its own rows and its own targets', () => {
      expect({ code: run.code, failures: report.failures }).toEqual({ code: 0, failures: [] });
      expect(report.servers.map((s) => s.id)).toEqual(['redis', 'valkey-9']);
      expect(report.servers[1]!.version).toBe(`Valkey ${valkey.version}`);
      expect(report.machine.redis).toBe(`${report.servers[0]!.version}, Valkey ${valkey.version}`);
      for (const server of report.servers) {
        expect(server.scenarios.map((s) => s.scenario)).toEqual(['serial', 'parallel']);
        for (const scenario of server.scenarios) {
          expect(scenario.rows.map((r) => [r.id, r.status])).toEqual([
            ['raw', 'ok'],
            ['ours', 'ok'],
            ['redis-semaphore', 'ok'],
          ]);
        }
        expect(server.targets.find((t) => t.id === 'serial-p50')!.met).not.toBeNull();
      }
      const markdown = readFileSync(join(out, 'latest.md'), 'utf8');
      expect(markdown).toContain(`### Valkey ${valkey.version}`);
      expect(markdown).toContain(`| Valkey ${valkey.version} | result |`);
    });
  });
});
