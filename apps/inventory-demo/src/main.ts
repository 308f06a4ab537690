/**
 * `npm run demo`: the source documents' inventory experiment, reproduced with stock in Redis and
 * several app processes, and measured.
 *
 *   npm run demo                       # single Redis started here, 2 app processes, full experiments
 *   npm run demo -- --short            # a quick version (CI runs it)
 *   npm run demo -- --instances 3 --work-ms 50 --experiments 2 --out results/demo
 *   npm run demo -- --mode sentinel    # single | master-slave | sentinel | cluster | redlock
 *   DISTRIBUTED_LOCK_REDIS_HOST=... DISTRIBUTED_LOCK_REDIS_PORT=... npm run demo   # use an existing Redis instead of starting one
 *
 * Exits non-zero if a protected endpoint oversold or lost an update, or if the unprotected control
 * failed to show the oversell (then the run proved nothing).
 */
import { cpus, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { startTopology, type Topology, type TopologyMode } from 'redis-topology';
import { startApps, stopApps, type AppInstance } from './app-instances.js';
import { ENDPOINTS, runExperiment, type Endpoint, type RunResult, type RunSpec } from './experiments.js';
import { closeHttpClient } from './http-client.js';
import { difference, scrapeLockHistograms } from './lock-metrics.js';
import { consoleReport, writeReport, type DemoReport } from './report.js';

const { values: args } = parseArgs({
  options: {
    short: { type: 'boolean', default: false },
    instances: { type: 'string', default: '2' },
    'work-ms': { type: 'string' },
    out: { type: 'string', default: 'results/demo' },
    mode: { type: 'string', default: 'single' },
    experiments: { type: 'string', default: '1,2' },
  },
});

function positiveInteger(value: string, flag: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) throw new Error(`--${flag} must be a positive integer, got "${value}"`);
  return parsed;
}

const short = args.short!;
const instances = positiveInteger(args.instances!, 'instances');
const workMs = positiveInteger(args['work-ms'] ?? (short ? '20' : '50'), 'work-ms');
const PROTECTED: Endpoint[] = ['decorator', 'lock', 'try-lock'];

const experiments = new Set(args.experiments!.split(',').map((item) => Number(item.trim())));
if ([...experiments].some((n) => n !== 1 && n !== 2) || experiments.size === 0) throw new Error(`--experiments takes 1, 2 or 1,2; got "${args.experiments}"`);

function plan(): RunSpec[] {
  const experiment1 = ENDPOINTS.map((endpoint): RunSpec => ({ experiment: 1, endpoint, stock: 10, requests: 100, spreadMs: 1000, workMs }));
  const requests = short ? 100 : 1000;
  const experiment2 = (['lock', 'try-lock', 'decorator'] as Endpoint[]).map((endpoint): RunSpec => ({
    experiment: 2,
    endpoint,
    stock: requests,
    requests,
    spreadMs: short ? 1000 : 5000,
    workMs,
  }));
  return [...(experiments.has(1) ? experiment1 : []), ...(experiments.has(2) ? experiment2 : [])];
}

function check(runs: RunResult[]): string[] {
  const failures: string[] = [];
  for (const run of runs) {
    if (!PROTECTED.includes(run.endpoint)) continue;
    if (run.oversold > 0) failures.push(`experiment ${run.experiment} ${run.endpoint} oversold ${run.oversold}`);
    if (!run.consistent) failures.push(`experiment ${run.experiment} ${run.endpoint}: stock + orders != initial stock (lost update)`);
    if (run.errors > 0) failures.push(`experiment ${run.experiment} ${run.endpoint}: ${run.errors} requests failed (${run.errorSamples.join(' | ')})`);
  }
  const control = runs.find((run) => run.experiment === 1 && run.endpoint === 'unsafe');
  if (control && control.oversold === 0) failures.push('the unprotected control did not oversell, so this run proves nothing (raise --work-ms)');
  return failures;
}

const MODES: TopologyMode[] = ['single', 'master-slave', 'sentinel', 'cluster', 'redlock'];

async function main(): Promise<number> {
  const mode = args.mode as TopologyMode;
  if (!MODES.includes(mode)) throw new Error(`--mode must be one of ${MODES.join(', ')}; got "${args.mode}"`);
  const external = [
    'DISTRIBUTED_LOCK_REDIS_URL',
    'DISTRIBUTED_LOCK_REDIS_HOST',
    'DISTRIBUTED_LOCK_REDIS_PORT',
    'DISTRIBUTED_LOCK_REDIS_MODE',
    'DISTRIBUTED_LOCK_REDIS_NODES',
    'DISTRIBUTED_LOCK_REDIS_SENTINELS',
    'DISTRIBUTED_LOCK_REDIS_MASTER',
  ].some((name) => process.env[name]);
  let topology: Topology | undefined;
  let apps: AppInstance[] = [];
  const stop = async (): Promise<void> => {
    await stopApps(apps);
    closeHttpClient();
    await topology?.stop();
  };
  // Interrupted (Ctrl-C, or a SIGTERM from a supervisor): stop the apps and the servers started here first.
  process.once('SIGINT', () => void stop().then(() => process.exit(130)));
  process.once('SIGTERM', () => void stop().then(() => process.exit(143)));

  try {
    const env: Record<string, string> = {
      INVENTORY_WORK_MS: String(workMs),
      DISTRIBUTED_LOCK_WAIT_TIME: '300s',
      INVENTORY_TRY_WAIT: '300s',
      INVENTORY_TRY_LEASE: '10s',
    };
    if (!external) {
      topology = await startTopology(mode);
      Object.assign(env, topology.env);
      console.log(
        `${mode} topology started on loopback: ${Object.entries(topology.env)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')}`,
      );
    } else {
      console.log('using the Redis given by DISTRIBUTED_LOCK_REDIS_* variables');
    }
    apps = await startApps(instances, env);
    console.log(`${apps.length} inventory processes: ${apps.map((app) => app.url).join(', ')}`);
    console.log(`lock board, live while the experiments run: ${apps.map((app) => `${app.url}/locks`).join(', ')} (open it in a browser on this machine)\n`);

    const runId = Date.now().toString(36);
    const runs: RunResult[] = [];
    for (const spec of plan()) {
      const label = `experiment ${spec.experiment}, ${spec.endpoint}`;
      let lastPrint = performance.now();
      // The apps' lock metrics (OpenTelemetry, GET /metrics) before and after: this run's waits and holds.
      const metricsBefore = PROTECTED.includes(spec.endpoint) ? await scrapeLockHistograms(apps) : undefined;
      const result = await runExperiment(apps, spec, runId, (done, total) => {
        const now = performance.now();
        if (now - lastPrint >= 1000 || done === total) {
          lastPrint = now;
          process.stdout.write(`  ${label}: ${done}/${total} answered\n`);
        }
      });
      if (metricsBefore) result.lockMetrics = difference(await scrapeLockHistograms(apps), metricsBefore);
      runs.push(result);
      console.log(`  -> sold ${result.sold}, oversold ${result.oversold}, ${result.requestsPerSecond.toFixed(2)} req/s\n`);
    }

    const failures = check(runs);
    const report: DemoReport = {
      startedAt: new Date().toISOString(),
      machine: `${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
      mode: external ? `${process.env.DISTRIBUTED_LOCK_REDIS_MODE ?? 'single'} (given by DISTRIBUTED_LOCK_REDIS_* variables)` : mode,
      instances,
      workMs,
      short,
      runs,
      failures,
    };
    console.log(consoleReport(report));
    const files = writeReport(args.out!, report);
    console.log(`\nresults: ${files.join(', ')}`);
    if (failures.length) {
      console.error(`\nFAILED: ${failures.join('; ')}`);
      return 1;
    }
    console.log('\nOK: no protected endpoint oversold; the unprotected control did.');
    return 0;
  } finally {
    await stop();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`demo failed: ${(error as Error).message}`);
    process.exitCode = 1;
  },
);
