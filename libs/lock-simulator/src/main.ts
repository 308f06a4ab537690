import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { MUTANTS, mutantNamed } from './mutants.js';
import { luaVm, runSeeds, type SeedsReport } from './run-seeds.js';
import { simulate } from './simulation.js';

const USAGE = `npm run simulate -- [options]
  --seeds N        run N seeds (default 1000), in parallel on --workers threads (default: the cores)
  --from S         first seed of the batch (default 1)
  --seed S         replay one seed and print its story (who did what, when; each fault)
  --mutant NAME    run with a known bug put back (${MUTANTS.map((mutant) => mutant.name).join(', ')}); reports the first seed that catches it
  --all-mutants    each mutant in turn, up to --seeds seeds each
  --repeat         run every seed twice and compare the stories (determinism)
  --controls       replay each mutant's recorded catching seed (mutant-seeds.json): caught with the
                   mutant, clean without it
  --workers W`;

interface Options {
  seeds: number;
  from: number;
  seed: number | undefined;
  mutant: string | undefined;
  allMutants: boolean;
  repeat: boolean;
  controls: boolean;
  workers: number;
}

function parse(argv: string[]): Options {
  const options: Options = {
    seeds: 1000,
    from: 1,
    seed: undefined,
    mutant: undefined,
    allMutants: false,
    repeat: false,
    controls: false,
    workers: availableParallelism(),
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = (): string => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${flag} needs a value\n${USAGE}`);
      return next;
    };
    if (flag === '--seeds') options.seeds = Number(value());
    else if (flag === '--from') options.from = Number(value());
    else if (flag === '--seed') options.seed = Number(value());
    else if (flag === '--mutant') options.mutant = mutantNamed(value()).name;
    else if (flag === '--all-mutants') options.allMutants = true;
    else if (flag === '--repeat') options.repeat = true;
    else if (flag === '--controls') options.controls = true;
    else if (flag === '--workers') options.workers = Math.max(1, Number(value()));
    else if (flag === '--help' || flag === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else throw new Error(`unknown option ${flag}\n${USAGE}`);
  }
  for (const [name, number] of [
    ['--seeds', options.seeds],
    ['--from', options.from],
  ] as const) {
    if (!Number.isSafeInteger(number) || number < 0) throw new Error(`${name} expects a whole number, got ${number}`);
  }
  return options;
}

/** Runs `count` seeds from `from` split over `workers` threads (a worker runs a contiguous range). */
async function parallel(
  from: number,
  count: number,
  workers: number,
  extra: { mutant?: string; repeat?: boolean; stopAtFirst?: boolean },
): Promise<SeedsReport> {
  const chunk = Math.ceil(count / workers);
  const ranges = Array.from({ length: workers }, (_, i) => ({ from: from + i * chunk, count: Math.max(0, Math.min(chunk, count - i * chunk)) })).filter(
    (range) => range.count > 0,
  );
  const reports = await Promise.all(
    ranges.map(
      (range) =>
        new Promise<SeedsReport>((resolve, reject) => {
          const worker = new Worker(fileURLToPath(import.meta.url), { workerData: { ...range, ...extra } });
          worker.once('message', (report: SeedsReport) => resolve(report));
          worker.once('error', reject);
          worker.once('exit', (code) => code !== 0 && reject(new Error(`a simulator worker exited with ${code}`)));
        }),
    ),
  );
  return {
    seeds: reports.reduce((sum, report) => sum + report.seeds, 0),
    events: reports.reduce((sum, report) => sum + report.events, 0),
    virtualMs: reports.reduce((sum, report) => sum + report.virtualMs, 0),
    failures: reports.flatMap((report) => report.failures).sort((a, b) => a.seed - b.seed),
    nondeterministic: reports.flatMap((report) => report.nondeterministic).sort((a, b) => a - b),
    mutantApplied: reports.reduce((sum, report) => sum + report.mutantApplied, 0),
    failingWithout: reports.flatMap((report) => report.failingWithout).sort((a, b) => a - b),
  };
}

async function replay(seed: number, mutant: string | undefined): Promise<number> {
  const result = await simulate(await luaVm(), seed, { mutant: mutant ? mutantNamed(mutant) : undefined, keepStory: true });
  for (const line of result.story) console.log(line);
  console.log(`\nseed ${seed}: ${result.events} events, ${(result.virtualMs / 1000).toFixed(1)} s of virtual time, story hash ${result.hash}`);
  for (const violation of result.violations) console.log(`VIOLATION ${violation.invariant} at ${violation.at.toFixed(3)}: ${violation.detail}`);
  return result.violations.length === 0 ? 0 : 1;
}

function summary(report: SeedsReport, seconds: number): string {
  return `${report.seeds} seeds in ${seconds.toFixed(1)} s (${(report.seeds / seconds).toFixed(0)} seeds/s), ${report.events} events, ${(report.virtualMs / 3_600_000).toFixed(2)} h of virtual time`;
}

/** A mutant the current faults have not caught in the seeds hunted (recorded as a gap, not as a catch). */
interface NotCaught {
  readonly notCaughtIn: string;
  readonly lastCaughtBy: number;
}

/**
 * The controls: each mutant's catching seed (recorded in mutant-seeds.json by a hunt, `--all-mutants`)
 * replayed with the mutant (it must break an invariant) and without it (the seed alone must be clean,
 * so that what catches the mutant is the mutant). Runs are deterministic, so a replay is the catch.
 */
async function controls(): Promise<number> {
  // Read from the sources (this file runs from dist/simulator/lock-simulator/src/).
  const table = JSON.parse(readFileSync(new URL('../../../../libs/lock-simulator/mutant-seeds.json', import.meta.url), 'utf8')) as Record<
    string,
    number | NotCaught
  >;
  const vm = await luaVm();
  let code = 0;
  for (const mutant of MUTANTS) {
    const seed = table[mutant.name];
    if (typeof seed === 'object') {
      // A known gap, said as such: the hunt's range is recorded, and the suite bounds how many there are.
      console.log(`mutant ${mutant.name}: NOT CAUGHT in seeds ${seed.notCaughtIn} (last caught by seed ${seed.lastCaughtBy}, under earlier faults)`);
      continue;
    }
    if (seed === undefined) {
      console.log(
        `mutant ${mutant.name}: no catching seed recorded in mutant-seeds.json (hunt one: npm run simulate -- --mutant ${mutant.name} --seeds 10000)`,
      );
      code = 1;
      continue;
    }
    const caught = await simulate(vm, seed, { mutant });
    const clean = await simulate(vm, seed, {});
    if (caught.violations.length === 0) {
      console.log(`mutant ${mutant.name}: seed ${seed} no longer catches it (hunt again: npm run simulate -- --mutant ${mutant.name} --seeds 10000)`);
      code = 1;
    } else if (clean.violations.length > 0) {
      console.log(
        `mutant ${mutant.name}: seed ${seed} fails without the mutant too (${clean.violations[0]!.invariant}): replay npm run simulate -- --seed ${seed}`,
      );
      code = 1;
    } else {
      console.log(
        `mutant ${mutant.name}: caught by seed ${seed} (${[...new Set(caught.violations.map((violation) => violation.invariant))].join(', ')}), clean without it`,
      );
    }
  }
  return code;
}

async function main(): Promise<number> {
  const options = parse(process.argv.slice(2));
  if (options.seed !== undefined) return replay(options.seed, options.mutant);
  if (options.controls) return controls();
  const mutants = options.allMutants ? MUTANTS.map((mutant) => mutant.name) : options.mutant ? [options.mutant] : [undefined];
  let code = 0;
  for (const mutant of mutants) {
    const started = performance.now();
    const report = await parallel(options.from, options.seeds, options.workers, { mutant, repeat: options.repeat, stopAtFirst: mutant !== undefined });
    const seconds = (performance.now() - started) / 1000;
    if (mutant !== undefined) {
      const caught = report.failures[0];
      if (report.failingWithout.length > 0) console.log(`mutant ${mutant}: seeds failing without it too, not counted: ${report.failingWithout.join(', ')}`);
      if (report.mutantApplied === 0) {
        console.log(
          `mutant ${mutant}: its rewrite matched nothing in ${report.seeds} runs: the library changed, update the mutant (libs/lock-simulator/src/mutants.ts)`,
        );
        code = 1;
      } else if (caught) {
        console.log(
          `mutant ${mutant}: caught by seed ${caught.seed} (${caught.invariants.join(', ')}): ${caught.first}\n  replay: npm run simulate -- --mutant ${mutant} --seed ${caught.seed}`,
        );
      } else {
        console.log(`mutant ${mutant}: NOT caught in ${report.seeds} seeds (${summary(report, seconds)})`);
        code = 1;
      }
      continue;
    }
    console.log(summary(report, seconds));
    for (const seed of report.nondeterministic) console.log(`NONDETERMINISTIC: seed ${seed} told two stories`);
    for (const failure of report.failures) {
      console.log(`VIOLATION seed ${failure.seed} (${failure.invariants.join(', ')}): ${failure.first}\n  replay: npm run simulate -- --seed ${failure.seed}`);
    }
    if (report.failures.length > 0 || report.nondeterministic.length > 0) code = 1;
    else console.log('no violation');
  }
  return code;
}

const { isMainThread, parentPort, workerData } = await import('node:worker_threads');
if (isMainThread) {
  main().then(
    // Exit once stdout has drained: process.exit() at once cut a long story short when piped.
    (code) => process.stdout.write('', () => process.exit(code)),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(2);
    },
  );
} else {
  parentPort!.postMessage(await runSeeds(workerData as Parameters<typeof runSeeds>[0]));
}
