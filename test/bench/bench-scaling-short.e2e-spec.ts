import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CURVES = ['callers', 'processes', 'watchdog', 'waiting', 'memory'];

interface Run {
  round: number;
  status: string;
  metrics?: Record<string, number | null>;
}
interface Row {
  id: string;
  point: string;
  status: 'ok' | 'could-not-run' | 'failed';
  reason?: string;
  runs: Run[];
}
interface Series {
  id: string;
  status: 'ok' | 'could-not-run' | 'failed';
  reason?: string;
  points: Row[];
}
interface Report {
  kind: string;
  command: string;
  machine: { cores: number; redis: string; loadAverageAtStart: number[] };
  curves: { curve: string; points: { label: string }[]; metrics: { id: string }[]; series: Series[] }[];
  failures: string[];
}

/**
 * The scaling set in its smallest form (--short: two small points per curve, one round), for the
 * baseline and our library. Shape and correctness only: timings depend on the host and are never asserted.
 */
describe('npm run bench -- --scenarios scaling --short (the cost curves, smallest points)', () => {
  let out: string;
  let run: { code: number | null; stdout: string; stderr: string };
  let report: Report;

  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), 'dlock-scaling-'));
    run = await new Promise((resolve) => {
      const args = [join(ROOT, 'dist/bench/main.js'), '--scenarios', 'scaling', '--short', '--only', 'raw,ours', '--out', out];
      const child = execFile(process.execPath, args, { cwd: ROOT, timeout: 110_000 }, (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
      child.stdin?.end();
    });
    report = JSON.parse(readFileSync(join(out, 'scaling.json'), 'utf8')) as Report;
  }, 120_000);

  afterAll(() => {
    rmSync(out, { recursive: true, force: true });
  });

  const curve = (name: string): Report['curves'][number] => report.curves.find((c) => c.curve === name)!;
  const series = (name: string, id: string): Series => curve(name).series.find((s) => s.id === id)!;
  const metrics = (name: string, id: string): Record<string, number | null>[] => series(name, id).points.flatMap((row) => row.runs.map((r) => r.metrics!));

  it('exits 0 and writes scaling.json, scaling.md and one SVG per curve, and not the comparison files', () => {
    expect({ code: run.code, failures: report.failures }).toEqual({ code: 0, failures: [] });
    expect(report.kind).toBe('scaling');
    expect(report.command).toContain('--scenarios scaling');
    expect(report.machine.loadAverageAtStart).toHaveLength(3);
    const markdown = readFileSync(join(out, 'scaling.md'), 'utf8');
    for (const name of CURVES) {
      expect(readFileSync(join(out, `scaling-${name}.svg`), 'utf8')).toMatch(/^<svg[\s\S]*<\/svg>\n$/);
      expect(markdown).toContain(`](scaling-${name}.svg)`);
    }
    expect(existsSync(join(out, 'latest.json'))).toBe(false);
    expect(run.stderr).not.toMatch(/Unhandled|ERR_/);
  });

  it('has every curve, and a row per point for each library, measured or not measured with a reason', () => {
    expect(report.curves.map((c) => c.curve)).toEqual(CURVES);
    for (const c of report.curves) {
      expect(c.points.length).toBeGreaterThan(0);
      expect(c.series.map((s) => s.id)).toEqual(['raw', 'ours']);
      for (const s of c.series) {
        expect(s.points.map((row) => row.point)).toEqual(c.points.map((p) => p.label));
        if (s.status === 'could-not-run') {
          expect(s.reason).toMatch(/\S/);
          continue;
        }
        for (const row of s.points)
          expect({ curve: c.curve, id: s.id, point: row.point, status: row.status, ran: row.runs.every((r) => r.metrics !== undefined) }).toEqual({
            curve: c.curve,
            id: s.id,
            point: row.point,
            status: 'ok',
            ran: true,
          });
      }
    }
    // The baseline has no renewal of its own: not measured on the watchdog curve, and said why.
    expect(series('watchdog', 'raw').status).toBe('could-not-run');
    for (const name of CURVES) expect({ name, status: series(name, 'ours').status }).toEqual({ name, status: 'ok' });
  });

  it('measures what each curve is about for our library (presence and counts, no timings)', () => {
    for (const m of metrics('callers', 'ours')) expect(m.cycles).toBeGreaterThan(0);
    for (const m of metrics('processes', 'ours')) expect({ lost: m.lostUpdates, counted: m.sections! > 0 }).toEqual({ lost: 0, counted: true });
    for (const m of metrics('watchdog', 'ours')) {
      expect(m.renewalsPerSec).toBeGreaterThan(0);
      expect(typeof m.roundMs).toBe('number');
      expect({ lostWhileAcquiring: m.lostWhileAcquiring, lostAfterwards: m.lostAfterwards }).toEqual({ lostWhileAcquiring: 0, lostAfterwards: 0 });
    }
    for (const m of metrics('waiting', 'ours')) {
      // One subscription per name waited on, however many callers wait for it.
      expect(m.subscriptions).toBeGreaterThan(0);
      expect(m.subscriptions).toBeLessThanOrEqual(m.names!);
      expect({ unfinished: m.unfinishedEntries, early: m.earlyEntries, entries: m.firstEntries! > 0 }).toEqual({ unfinished: 0, early: 0, entries: true });
    }
    for (const m of metrics('memory', 'ours')) {
      // One key per held lock; one fencing counter for every name; a lost counter never lowers tokens.
      expect({ keys: m.keysPerHeldLock, counters: m.fenceCounters, tokenUp: m.tokenIncreasesAfterCounterLoss }).toEqual({ keys: 1, counters: 1, tokenUp: 1 });
    }
    for (const m of metrics('memory', 'raw'))
      expect({ keysPerHeldLock: m.keysPerHeldLock, counters: m.fenceCounters }).toEqual({ keysPerHeldLock: 1, counters: 0 });
  });
});
