import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LockService } from 'nestjs-distributed-lock';
import { InMemoryLockStore } from 'nestjs-distributed-lock/testing';
import { LOCK_ENV_VARIABLES } from '../../libs/distributed-lock/src/core/config/env-config.parser.js';
import { LOCK_CLIENT_OPTION_KEYS } from '../../libs/distributed-lock/src/core/config/lock-client-options.js';
import { resolveLockClientOptions } from '../../libs/distributed-lock/src/core/config/resolve-lock-client-options.js';
import { toMilliseconds } from '../../libs/distributed-lock/src/core/util/duration.js';
import { MODULE_ONLY_OPTION_KEYS } from '../../libs/distributed-lock/src/nest/distributed-lock-module.options.js';
import { ROOT } from '../package/packed-library.js';
import { environmentVariablesRead } from './environment-variables.js';
import { codeSpans, tableWithHeader, type MarkdownTable } from './markdown-tables.js';

const PAGE = 'docs/operations/configuration.md';
const OPTIONS = ['Option', 'Environment variable', 'Default', 'Meaning'];
const VARIABLES = ['Variable', 'Modes', 'Default', 'Form'];

/** What the code uses when nothing is set: every option's resolved value, with an empty environment. */
interface Defaults {
  /** The resolved options (LockClient's, then the module's settings), by their resolved names. */
  values: Record<string, unknown>;
  /** Resolved names whose default is made anew each time (a random client id): the page states one, it cannot match. */
  generated: Set<string>;
  /** The connection made from an empty environment ({ mode, host, port }). */
  connection: Record<string, unknown>;
}

/** The resolved value of option `key` (`watchdogTimeout` -> `watchdogTimeoutMs`, `defaultWaitTime` -> `defaultWaitMs`), if it resolves to one. */
function resolvedValue(defaults: Defaults, key: string): { value: unknown } | undefined {
  const name = [key, `${key}Ms`, `${key.replace(/Time$/, '')}Ms`].find((candidate) => candidate in defaults.values);
  return name === undefined || defaults.generated.has(name) ? undefined : { value: defaults.values[name] };
}

const stated = (cell: string): boolean => cell.replace(/`/g, '').trim() !== '' && cell.trim() !== '–' && cell.trim() !== '-';

/** Whether a Default cell says `value`: `none`/`off` for nothing, a duration in ms, a boolean, a code span, or every part of an object. */
function saysDefault(cell: string, value: unknown): boolean {
  const text = cell.replace(/`/g, '').trim();
  if (value === undefined) return /^(none|off)\b/.test(text);
  if (typeof value === 'boolean') return text.split(/[\s,(]/)[0] === String(value);
  if (typeof value === 'number') {
    const first = text.split(/[\s,(]/)[0]!;
    return /^\d+$/.test(first) ? Number(first) === value : toMilliseconds(first, 'Default cell', { min: 0 }) === value;
  }
  if (typeof value === 'string') return codeSpans(cell).includes(value);
  // An object (a connection, a clock): each of its plain values is named; its methods and nested objects are not.
  if (typeof value === 'object' && value !== null)
    return Object.values(value).every((part) => typeof part === 'object' || typeof part === 'function' || text.includes(String(part)));
  return false;
}

/** Where the configuration page and the code differ, empty when they agree. */
function configurationProblems(
  options: readonly string[],
  variables: readonly string[],
  defaults: Defaults,
  tables: { options: MarkdownTable; variables: MarkdownTable },
): string[] {
  const problems: string[] = [];
  for (const key of options) {
    const row = tables.options.rows.find((cells) => codeSpans(cells[0]!)[0] === key);
    if (!row) {
      problems.push(`the option ${key} has no row in ${PAGE}`);
      continue;
    }
    const resolved = resolvedValue(defaults, key);
    if (!stated(row[2]!)) problems.push(`${key}: its row in ${PAGE} gives no default`);
    else if (resolved && !saysDefault(row[2]!, resolved.value))
      problems.push(`${key}: ${PAGE} says the default is "${row[2]}", the code's is ${JSON.stringify(resolved.value)}`);
  }
  const variableRows = [
    ...tables.options.rows.map((cells) => ({ names: codeSpans(cells[1]!), default: cells[2]! })),
    ...tables.variables.rows.map((cells) => ({ names: codeSpans(cells[0]!), default: cells[2]! })),
  ];
  for (const variable of variables) {
    const rows = variableRows.filter((row) => row.names.includes(variable));
    if (rows.length === 0) problems.push(`${variable} is read by the library, and no table of ${PAGE} has it`);
    else if (!rows.some((row) => stated(row.default))) problems.push(`${variable}: no row of ${PAGE} gives its default`);
  }
  for (const [field, value] of Object.entries(defaults.connection)) {
    const variable = `DISTRIBUTED_LOCK_REDIS_${field.toUpperCase()}`;
    const rows = variableRows.filter((row) => row.names.includes(variable));
    if (rows.length > 0 && !rows.some((row) => row.default.includes(String(value))))
      problems.push(`${variable}: ${PAGE} does not give its default, ${String(value)}`);
  }
  return problems;
}

/**
 * docs/operations/configuration.md has every option (the keys the options validator accepts) and
 * every DISTRIBUTED_LOCK_* variable the library reads (found in its source), each with its default,
 * checked against what the code resolves from nothing.
 */
describe(`the configuration page (${PAGE})`, () => {
  const options = [...LOCK_CLIENT_OPTION_KEYS, ...MODULE_ONLY_OPTION_KEYS];
  const read = environmentVariablesRead();
  const variables = [...new Set([...LOCK_ENV_VARIABLES, ...read.keys()])];
  let defaults: Defaults;
  let tables: { options: MarkdownTable; variables: MarkdownTable };

  beforeAll(async () => {
    const client = resolveLockClientOptions({ env: {} });
    const again: Record<string, unknown> = { ...resolveLockClientOptions({ env: {} }) };
    const generated = new Set(Object.entries(client).flatMap(([name, value]) => (typeof value !== 'object' && value !== again[name] ? [name] : [])));
    const service = new LockService({ client: new InMemoryLockStore(), env: {} });
    defaults = { values: { ...client, ...service.settings }, generated, connection: { ...client.connection } };
    await service.close();
    const markdown = readFileSync(join(ROOT, PAGE), 'utf8');
    tables = { options: tableWithHeader(markdown, OPTIONS, PAGE), variables: tableWithHeader(markdown, VARIABLES, PAGE) };
  });

  it('the variables the source reads are the ones LOCK_ENV_VARIABLES lists (the list test/compose checks the compose file against)', () => {
    expect(read.size).toBeGreaterThan(20);
    expect([...read.keys()].sort()).toEqual([...LOCK_ENV_VARIABLES].sort());
  });

  it("has every option and every variable, each with its default, and the defaults are the code's", () => {
    expect(configurationProblems(options, variables, defaults, tables)).toEqual([]);
  });

  it('control: an option taken out, a variable taken out and a wrong default are each reported', () => {
    const without = (table: MarkdownTable, drop: (cells: string[]) => boolean): MarkdownTable => ({
      ...table,
      rows: table.rows.filter((cells) => !drop(cells)),
    });
    expect(configurationProblems(options, variables, defaults, { ...tables, options: without(tables.options, (cells) => cells[0] === '`env`') })).toEqual([
      `the option env has no row in ${PAGE}`,
    ]);
    expect(
      configurationProblems(options, variables, defaults, {
        ...tables,
        variables: without(tables.variables, (cells) => cells[0]!.includes('DISTRIBUTED_LOCK_REDIS_NAT_MAP')),
      }),
    ).toEqual([`DISTRIBUTED_LOCK_REDIS_NAT_MAP is read by the library, and no table of ${PAGE} has it`]);
    const wrong = {
      ...tables.options,
      rows: tables.options.rows.map((cells) => (cells[0] === '`watchdogTimeout`' ? [cells[0], cells[1]!, '`20s`', cells[3]!] : cells)),
    };
    expect(configurationProblems(options, variables, defaults, { ...tables, options: wrong })).toEqual([
      `watchdogTimeout: ${PAGE} says the default is "\`20s\`", the code's is 30000`,
    ]);
  });
});
