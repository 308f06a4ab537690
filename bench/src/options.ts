import { parseArgs } from 'node:util';
import { ADAPTERS } from './adapters/index.js';

export const SCENARIO_NAMES = ['serial', 'parallel', 'contended', 'decorator', 'semaphore'] as const;
export type BenchScenario = (typeof SCENARIO_NAMES)[number];

export interface BenchOptions {
  short: boolean;
  rounds: number;
  /** Library ids to run, in table order. */
  libraries: string[];
  scenarios: BenchScenario[];
  out: string;
  serialMs: number;
  serialWarmup: number;
  parallelMs: number;
  parallelWarmupMs: number;
  parallelCallers: number;
  contendedMs: number;
  contendedProcesses: number;
  contendedCallers: number;
  /** How long after the end a contended run waits for callers still waiting before cutting them off. */
  contendedGraceMs: number;
  decoratorMs: number;
  decoratorWarmupMs: number;
}

export const USAGE = `npm run bench -- [--short] [--rounds N] [--only ids] [--scenarios names] [--out dir]
  --short        a few seconds per scenario in total, one round (what CI runs)
  --rounds N     rounds; each runs every scenario for every library, libraries interleaved (default 3, --short 1)
  --only ids     comma-separated library ids: ${ADAPTERS.map((a) => `${a.id}${a.experiment ? ' (experiment, only when named)' : ''}`).join(', ')}
  --scenarios s  comma-separated: ${SCENARIO_NAMES.join(', ')} (default all)
  --out dir      where latest.json, latest.md and latest.svg go (default results/bench)`;

function positiveInteger(value: string, flag: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) throw new Error(`--${flag} must be a positive integer, got "${value}"\n${USAGE}`);
  return parsed;
}

function list<T extends string>(value: string, known: readonly T[], flag: string): T[] {
  const items = value.split(',').map((item) => item.trim()).filter(Boolean);
  const unknown = items.filter((item) => !known.includes(item as T));
  if (unknown.length || items.length === 0) throw new Error(`--${flag}: unknown ${unknown.join(', ') || '(empty)'}; known: ${known.join(', ')}`);
  return known.filter((item) => items.includes(item));
}

export function parseOptions(argv: string[]): BenchOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: {
      short: { type: 'boolean', default: false },
      rounds: { type: 'string' },
      only: { type: 'string' },
      scenarios: { type: 'string' },
      out: { type: 'string', default: 'results/bench' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return 'help';
  const short = values.short!;
  const ids = ADAPTERS.map((a) => a.id);
  const defaults = ADAPTERS.filter((a) => !a.experiment).map((a) => a.id);
  return {
    short,
    rounds: values.rounds === undefined ? (short ? 1 : 3) : positiveInteger(values.rounds, 'rounds'),
    libraries: values.only === undefined ? defaults : list(values.only, ids, 'only'),
    scenarios: values.scenarios === undefined ? [...SCENARIO_NAMES] : list(values.scenarios, SCENARIO_NAMES, 'scenarios'),
    out: values.out!,
    serialMs: short ? 250 : 2000,
    serialWarmup: short ? 20 : 200,
    parallelMs: short ? 250 : 2000,
    parallelWarmupMs: short ? 50 : 300,
    parallelCallers: 100,
    contendedMs: short ? 600 : 3000,
    contendedProcesses: 4,
    contendedCallers: 8,
    contendedGraceMs: short ? 1000 : 5000,
    decoratorMs: short ? 400 : 3000,
    decoratorWarmupMs: short ? 200 : 1000,
  };
}
