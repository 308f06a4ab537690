/**
 * `npm run bench`: this library against its peers on throwaway servers, in one run.
 *
 *   npm run bench                          # 3 rounds of every scenario, every library, on Redis and Valkey 9
 *   npm run bench -- --short               # a few seconds per scenario, one round, Redis only (CI)
 *   npm run bench -- --rounds 5 --only raw,ours,redis-semaphore --scenarios serial,contended --out results/bench
 *   npm run bench -- --servers valkey-9,valkey-8.1  # the same on other servers (scripts/servers.mjs)
 *   npm run bench -- --scenarios scaling     # the cost curves (not run by default): scaling.{json,md}, scaling-*.svg
 *
 * Rounds interleave the libraries (A B C ... A B C ...), so slow drifts of a shared host hit all of
 * them alike; tables show the median over rounds and the spread (min-max). Each server runs every
 * round in turn, and its ratios are judged within its own run. Writes latest.json, latest.md and
 * latest.svg to --out. Exits non-zero if a correct lock lost an update or a run failed.
 */
import { ADAPTERS, adapterById, LEASE_MS } from './adapters/index.js';
import { chooseServers } from './bench-servers.js';
import { ComparisonBench } from './comparison-bench.js';
import { cpuTimes, machineInfo, stealPercent } from './machine.js';
import { parseOptions, USAGE, type BenchOptions } from './options.js';
import { concludeRun, stopOnInterrupt } from './run-lifecycle.js';
import { installedVersion } from './paths.js';
import { consoleReport, writeReport } from './report.js';
import { runScaling } from './scaling/run-scaling.js';
import { compareSemaphores, findProblems, judgeTargets, type BenchReport, type ServerResult } from './results.js';
import { DECORATOR_LOAD } from './scenarios/decorator.js';

/** Rows that must run without a lost update, an error or a failure: the baseline and our locks. */
const MUST_BE_CORRECT: ReadonlySet<string> = new Set(ADAPTERS.filter((a) => !a.packageName || a.packageName === 'nestjs-distributed-lock').map((a) => a.id));

function commandLine(argv: string[]): string {
  const args = argv.join(' ');
  return process.env.npm_lifecycle_event === 'bench' ? `npm run bench${args ? ` -- ${args}` : ''}` : `node dist/bench/main.js${args ? ` ${args}` : ''}`;
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const options = parseOptions(argv);
  if (options === 'help') {
    console.log(USAGE);
    return 0;
  }
  let code = 0;
  if (options.scenarios.length > 0) code = await runComparison(options, argv);
  if (options.curves.length > 0) code = Math.max(code, await runScaling(options, commandLine(argv)));
  return code;
}

/** The comparison scenarios (serial, parallel, contended, decorator, semaphore) on each server: latest.{json,md,svg}. */
async function runComparison(options: BenchOptions, argv: string[]): Promise<number> {
  const startedAt = new Date().toISOString();
  const cpuAtStart = cpuTimes();
  const { servers, skipped } = chooseServers(options.servers, options.short);
  let bench: ComparisonBench | undefined;
  const ignoreInterrupts = stopOnInterrupt({ stop: async () => bench?.stop(), killNow: () => bench?.killNow() }, 'this benchmark');
  const results: ServerResult[] = [];
  const loadAverageAtStart = machineInfo('').loadAverageAtStart;
  try {
    for (const notice of skipped) console.log(notice);
    console.log(
      `servers: ${servers.map((s) => s.id).join(', ')}; libraries: ${options.libraries.join(', ')}; ${options.rounds} round(s); scenarios: ${options.scenarios.join(', ')}`,
    );
    for (const server of servers) {
      bench = new ComparisonBench(options, server);
      await bench.start();
      const version = await bench.redisVersion();
      for (let round = 1; round <= options.rounds; round++) await bench.round(round);
      const scenarios = bench.results();
      results.push({ id: server.id, version, scenarios, targets: judgeTargets({ scenarios }), comparisons: compareSemaphores({ scenarios }) });
      await bench.stop();
      bench = undefined;
    }
    const machine = { ...machineInfo(results.map((r) => r.version).join(', ')), loadAverageAtStart, stealPercent: stealPercent(cpuAtStart, cpuTimes()) };
    const report: BenchReport = {
      schema: 2,
      startedAt,
      finishedAt: new Date().toISOString(),
      command: commandLine(argv),
      short: options.short,
      rounds: options.rounds,
      machine,
      method: {
        leaseMs: LEASE_MS,
        rounds: 'interleaved: every round runs every library in turn (A B C ... A B C ...); tables show the median over rounds and the min-max spread',
        redis:
          'one server started per --servers entry on a free 127.0.0.1 port (no persistence), one after the other (every round on one, then the next); FLUSHDB before every run; ratios are taken within one server',
        sessions: 'each run opens the library afresh (its own connections) and closes it afterwards; connecting is not timed',
        serialMs: options.serialMs,
        parallelMs: options.parallelMs,
        parallelCallers: options.parallelCallers,
        contendedMs: options.contendedMs,
        contendedProcesses: options.contendedProcesses,
        contendedCallersPerProcess: options.contendedCallers,
        contendedGraceMs: options.contendedGraceMs,
        decoratorMs: options.decoratorMs,
        decoratorConnections: DECORATOR_LOAD.connections,
      },
      libraries: options.libraries.map(adapterById).map((a) => ({
        id: a.id,
        label: a.label,
        packageName: a.packageName,
        version: a.packageName ? installedVersion(a.packageName) : '',
        family: a.family ?? false,
        scenarios: [...a.scenarios],
        settings: a.settings,
      })),
      servers: results,
      failures: [],
      notes: [...skipped],
    };
    for (const result of results) {
      const problems = findProblems(result, MUST_BE_CORRECT);
      const on = results.length > 1 ? `${result.version}: ` : '';
      report.failures.push(...problems.failures.map((f) => on + f));
      report.notes.push(...problems.notes.map((n) => on + n));
    }
    return concludeRun(consoleReport(report), writeReport(options.out, report), report.failures);
  } finally {
    ignoreInterrupts();
    await bench?.stop();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`bench failed: ${(error as Error).stack ?? String(error)}`);
    process.exitCode = 1;
  },
);
