import { parseArgs } from 'node:util';
import { ADAPTERS } from './adapters/index.js';
import { SERVER_IDS } from './bench-servers.js';
import { CURVE_NAMES, SCALING_LIBRARIES, type ScalingCurve } from './scaling/curves.js';

export const SCENARIO_NAMES = ['serial', 'parallel', 'contended', 'decorator', 'semaphore'] as const;
export type BenchScenario = (typeof SCENARIO_NAMES)[number];
/** The scaling set: not run by default (about 20 minutes on a 2-vCPU VM); `--scenarios scaling` or `--curves`. */
export const SCALING = 'scaling';

export interface BenchOptions {
  short: boolean;
  rounds: number;
  /** Library ids to run, in table order. */
  libraries: string[];
  /** Whether --only chose the libraries (otherwise each scaling curve runs its own default set). */
  onlyGiven: boolean;
  scenarios: BenchScenario[];
  /** Curves of the scaling set to run (empty: the scaling set is not run). */
  curves: ScalingCurve[];
  out: string;
  /** Servers named with --servers, in order (undefined: the default, see chooseServers). */
  servers: string[] | undefined;
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

export const USAGE = `npm run bench -- [--short] [--rounds N] [--only ids] [--scenarios names] [--servers ids] [--curves names] [--out dir]
  --short        a few seconds per scenario in total, one round (what CI runs)
  --rounds N     rounds; each runs every scenario for every library, libraries interleaved (default 3, --short 1)
  --only ids     comma-separated library ids: ${ADAPTERS.map((a) => `${a.id}${a.experiment ? ' (experiment, only when named)' : ''}`).join(', ')}
  --scenarios s  comma-separated: ${SCENARIO_NAMES.join(', ')} (default all), and ${SCALING}: the cost curves
                 (not run by default; about 20 minutes, --short a few seconds per curve); libraries:
                 ${SCALING_LIBRARIES.join(', ')} unless --only says otherwise
  --servers s    comma-separated servers to run the comparison on, one after the other: ${SERVER_IDS.join(', ')}
                 (redis: the redis-server on PATH; the others: where npm run setup put them). Default:
                 redis, and valkey-9 when set-up fetched it; --short: redis alone
  --curves c     comma-separated curves of the scaling set: ${CURVE_NAMES.join(', ')} (default all; implies ${SCALING})
  --out dir      where latest.json, latest.md and latest.svg go, and scaling.json, scaling.md and
                 scaling-<curve>.svg (default results/bench)`;

function positiveInteger(value: string, flag: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) throw new Error(`--${flag} must be a positive integer, got "${value}"\n${USAGE}`);
  return parsed;
}

function list<T extends string>(value: string, known: readonly T[], flag: string): T[] {
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  const unknown = items.filter((item) => !known.includes(item as T));
  if (unknown.length || items.length === 0) throw new Error(`--${flag}: unknown ${unknown.join(', ') || '(empty)'}; known: ${known.join(', ')}`);
  return known.filter((item) => items.includes(item));
}

/** Like `list`, in the order given (the servers run in that order). */
function orderedList(value: string, known: readonly string[], flag: string): string[] {
  const chosen = list(value, known, flag);
  return [...new Set(value.split(',').map((item) => item.trim()))].filter((item) => chosen.includes(item));
}

export function parseOptions(argv: string[]): BenchOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: {
      short: { type: 'boolean', default: false },
      rounds: { type: 'string' },
      only: { type: 'string' },
      scenarios: { type: 'string' },
      curves: { type: 'string' },
      out: { type: 'string', default: 'results/bench' },
      servers: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return 'help';
  const short = values.short!;
  const ids = ADAPTERS.map((a) => a.id);
  const defaults = ADAPTERS.filter((a) => !a.experiment).map((a) => a.id);
  const requested: string[] | undefined = values.scenarios === undefined ? undefined : list(values.scenarios, [...SCENARIO_NAMES, SCALING], 'scenarios');
  return {
    short,
    rounds: values.rounds === undefined ? (short ? 1 : 3) : positiveInteger(values.rounds, 'rounds'),
    libraries: values.only === undefined ? defaults : list(values.only, ids, 'only'),
    onlyGiven: values.only !== undefined,
    scenarios: requested ? SCENARIO_NAMES.filter((name) => requested.includes(name)) : values.curves === undefined ? [...SCENARIO_NAMES] : [],
    curves: values.curves !== undefined ? list(values.curves, CURVE_NAMES, 'curves') : requested?.includes(SCALING) ? [...CURVE_NAMES] : [],
    out: values.out!,
    servers: values.servers === undefined ? undefined : orderedList(values.servers, SERVER_IDS, 'servers'),
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
