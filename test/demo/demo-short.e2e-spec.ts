import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Run {
  experiment: number;
  endpoint: string;
  oversold: number;
  consistent: boolean;
  sold: number;
  errors: number;
  lockMetrics?: { wait: { count: number; counts: number[] }; hold: { count: number; counts: number[] } };
}

describe('npm run demo -- --short (the CI form of the main job)', () => {
  let out: string;
  beforeAll(() => {
    out = mkdtempSync(join(tmpdir(), 'dlock-demo-'));
  });
  afterAll(() => {
    rmSync(out, { recursive: true, force: true });
  });

  it('runs both experiments over two app processes: no protected endpoint oversells, the control does', async () => {
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [join(ROOT, 'dist/apps/inventory-demo/main.js'), '--short', '--out', out],
        { cwd: ROOT, timeout: 170_000 },
        (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
      child.stdin?.end();
    });
    const report = JSON.parse(readFileSync(join(out, 'demo-results.json'), 'utf8')) as { runs: Run[]; failures: string[]; instances: number };
    expect({ code, failures: report.failures }).toEqual({ code: 0, failures: [] });
    expect(report.instances).toBe(2);
    for (const run of report.runs.filter((r) => r.endpoint !== 'unsafe')) {
      expect({ run: `${run.experiment}/${run.endpoint}`, oversold: run.oversold, consistent: run.consistent, errors: run.errors }).toEqual({
        run: `${run.experiment}/${run.endpoint}`,
        oversold: 0,
        consistent: true,
        errors: 0,
      });
    }
    expect(report.runs.find((r) => r.experiment === 1 && r.endpoint === 'unsafe')!.oversold).toBeGreaterThan(0);
    expect(report.runs.filter((r) => r.experiment === 1 && r.endpoint !== 'unsafe').map((r) => r.sold)).toEqual([10, 10, 10]);
    // Every protected run reports the lock wait and hold histograms scraped from the apps' /metrics.
    for (const run of report.runs.filter((r) => r.endpoint !== 'unsafe')) {
      expect(run.lockMetrics!.wait.count).toBeGreaterThanOrEqual(run.sold);
      expect(run.lockMetrics!.hold.count).toBeGreaterThanOrEqual(run.sold);
      expect(run.lockMetrics!.wait.counts.reduce((a, b) => a + b, 0)).toBe(run.lockMetrics!.wait.count);
    }
    expect(report.runs.find((r) => r.endpoint === 'unsafe')!.lockMetrics).toBeUndefined();
    expect(stdout).toContain("Lock wait and hold per purchase, from the apps' GET /metrics");
    expect(stdout).toContain('Experiment 2');
    expect(stderr).not.toMatch(/Unhandled|ERR_/);
  }, 180_000);
});

/** Whether something accepts connections on the loopback port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('npm run demo, stopped by SIGTERM (a supervisor, a CI timeout)', () => {
  it('stops its app processes and the redis-server it started before it exits', async () => {
    const out = mkdtempSync(join(tmpdir(), 'dlock-demo-sigterm-'));
    const child = spawn(process.execPath, [join(ROOT, 'dist/apps/inventory-demo/main.js'), '--short', '--experiments', '2', '--out', out], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('close', (code, signal) => resolve({ code, signal })),
    );
    let output = '';
    // 'close': the demo has exited and its output pipes are closed, so nothing of it outlives the test.
    // Wait until the servers and both apps are up (the line naming the apps comes after the topology's).
    const ports = await new Promise<number[]>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const redis = /DISTRIBUTED_LOCK_REDIS_PORT=(\d+)/.exec(output);
        const apps = /inventory processes: (.+)\n/.exec(output);
        if (redis && apps) resolve([Number(redis[1]), ...[...apps[1]!.matchAll(/:(\d+)/g)].map((m) => Number(m[1]))]);
      });
      void exited.then(() => reject(new Error(`the demo exited before it was up:\n${output}`)));
    });
    expect(ports).toHaveLength(3);
    try {
      child.kill('SIGTERM');
      const { code, signal } = await exited;
      // Killed by the signal itself (no handler), it would leave its redis-server and apps running.
      expect({ code, signal }).toEqual({ code: 143, signal: null });
      expect(await Promise.all(ports.map(listening))).toEqual([false, false, false]);
    } finally {
      // The control (no SIGTERM handler) leaves the apps and the redis-server behind: the demo runs in
      // a process group of its own, so everything it started goes with the group, whatever happened.
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // the group is empty: the expected case
      }
      rmSync(out, { recursive: true, force: true });
    }
  }, 60_000);
});
