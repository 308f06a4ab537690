import { adapterById, ADAPTERS } from '../adapters/index.js';
import { concludeRun, stopOnInterrupt } from '../run-lifecycle.js';
import { cpuTimes, machineInfo, stealPercent } from '../machine.js';
import type { BenchOptions } from '../options.js';
import { installedVersion } from '../paths.js';
import { DEFAULT_RENEWAL_PERIOD_MS } from './curves.js';
import { holderFor } from './holders.js';
import { scalingConsoleReport, writeScalingReport } from './report.js';
import { scalingProblems, type ScalingReport } from './results.js';
import { ScalingBench } from './runner.js';

/** Rows whose errors fail the run: the baseline and our library. */
const MUST_BE_CORRECT: ReadonlySet<string> = new Set(ADAPTERS.filter((a) => !a.packageName || a.packageName === 'nestjs-distributed-lock').map((a) => a.id));

/** `npm run bench -- --scenarios scaling`: every curve, every round, then scaling.{json,md} and scaling-<curve>.svg. */
export async function runScaling(options: BenchOptions, command: string): Promise<number> {
  const startedAt = new Date().toISOString();
  const cpuAtStart = cpuTimes();
  const bench = new ScalingBench(options);
  const ignoreInterrupts = stopOnInterrupt(bench, 'the scaling set');
  try {
    await bench.start();
    const machine = machineInfo(await bench.redisVersion());
    console.log(`scaling set: ${options.curves.join(', ')}; ${options.rounds} round(s); load average ${machine.loadAverageAtStart.join(' / ')}`);
    for (let round = 1; round <= options.rounds; round++) await bench.round(round);
    machine.stealPercent = stealPercent(cpuAtStart, cpuTimes());
    const curves = bench.results();
    const ids = [...new Set(options.curves.flatMap((curve) => bench.libraries(curve).map((a) => a.id)))];
    const s = bench.settings;
    const report: ScalingReport = {
      schema: 1,
      kind: 'scaling',
      startedAt,
      finishedAt: new Date().toISOString(),
      command,
      short: options.short,
      rounds: options.rounds,
      machine,
      method: {
        rounds:
          'interleaved: every round runs every curve, and at each point every library in turn (A B C, next point, ...); tables show the median over rounds and the min-max spread',
        redis: 'one redis-server started for the run on a free 127.0.0.1 port (no persistence), FLUSHDB before every run',
        processes:
          "callers: in the benchmark process; processes: the contended scenario's worker processes; watchdog, waiting and memory: a fresh worker process per run (--expose-gc), killed after it answers",
        redisCpu:
          'INFO cpu used_cpu_user + used_cpu_sys deltas (CPU time of redis-server, so not inflated by a busy host; commandstats usec is wall time and is not used)',
        clientCpu: 'process.cpuUsage() deltas of the process that runs the library (user + system)',
        heap: 'process.memoryUsage().heapUsed after two global.gc() calls, before and after',
        callersMs: s.callers.durationMs,
        processesMs: s.processes.durationMs,
        callersPerProcess: s.processes.callersPerProcess,
        watchdogPeriods: s.watchdog.points.map((n) => `${n}: ${s.watchdog.periodMs(n)} ms period, ${s.watchdog.windowMs(n)} ms window`).join('; '),
        defaultRenewalPeriodMs: DEFAULT_RENEWAL_PERIOD_MS,
        waitingWindowMs: s.waiting.windowMs,
      },
      libraries: ids.map(adapterById).map((a) => ({
        id: a.id,
        label: a.label,
        packageName: a.packageName,
        version: a.packageName ? installedVersion(a.packageName) : '',
        ...(holderFor(a.id)?.renewal ? { renewal: holderFor(a.id)!.renewal } : {}),
      })),
      curves,
      failures: [],
      notes: [],
    };
    Object.assign(report, scalingProblems(curves, MUST_BE_CORRECT));
    return concludeRun(scalingConsoleReport(report), writeScalingReport(options.out, report), report.failures);
  } finally {
    ignoreInterrupts();
    await bench.stop();
  }
}
