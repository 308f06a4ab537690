import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../package/packed-library.js';
import { codeSpans, tableWithHeader, type MarkdownTable } from './markdown-tables.js';
import { publicErrors, type PublicErrors } from './public-errors.js';

const PAGE = 'docs/guides/errors.md';

/**
 * Where the errors page and the package differ: a code or an error class the package exports with no
 * row, a row for a code or class it does not export, or a subclass of another error (LockQuorumError
 * of LockBackendError) whose row does not say so.
 */
function errorPageProblems(errors: PublicErrors, table: MarkdownTable): string[] {
  const problems: string[] = [];
  const rows = table.rows.map(([classCell, codeCell]) => ({ classes: codeSpans(classCell!), code: codeSpans(codeCell!)[0] }));
  for (const code of errors.codes) {
    if (!rows.some((row) => row.code === code)) problems.push(`${code} is an error code of the package, and ${PAGE} has no row for it`);
  }
  for (const row of rows) {
    if (!row.code || !errors.codes.includes(row.code)) problems.push(`${PAGE} has a row for the code ${row.code}, which the package does not have`);
    if (!errors.classes.some((error) => error.name === row.classes[0]))
      problems.push(`${PAGE} has a row for ${row.classes[0]}, which the package does not export`);
  }
  for (const error of errors.classes.filter((each) => !each.abstract)) {
    const row = rows.find((each) => each.classes[0] === error.name);
    if (!row) problems.push(`${error.name} is exported, and ${PAGE} has no row for it`);
    else if (error.base !== 'DistributedLockError' && !row.classes.includes(error.base)) {
      problems.push(`${error.name} extends ${error.base}, and its row in ${PAGE} does not say so`);
    }
  }
  return problems;
}

/** docs/guides/errors.md has every error code and every error class of the package, read from its types. */
describe(`the errors page (${PAGE})`, () => {
  let errors: PublicErrors;
  let table: MarkdownTable;

  beforeAll(() => {
    errors = publicErrors();
    table = tableWithHeader(readFileSync(join(ROOT, PAGE), 'utf8'), ['Class', '`code`', 'When'], PAGE);
  }, 60_000);

  it('has a row for every code and every error class the main entry point exports, and says which extend another', () => {
    expect(errors.codes.length).toBeGreaterThan(10);
    expect(errors.classes.filter((error) => error.base === 'LockBackendError').map((error) => error.name)).toEqual(
      expect.arrayContaining(['LockQuorumError', 'ReplicaAckError']),
    );
    expect(errorPageProblems(errors, table)).toEqual([]);
  });

  it('control: a row taken out, and a subclass whose row does not name its base, are reported', () => {
    const without = { ...table, rows: table.rows.filter(([, code]) => code !== '`LOCK_CLIENT_NOT_CONNECTED`') };
    expect(errorPageProblems(errors, without)).toEqual([
      `LOCK_CLIENT_NOT_CONNECTED is an error code of the package, and ${PAGE} has no row for it`,
      `RedisClientNotConnectedError is exported, and ${PAGE} has no row for it`,
    ]);
    const unsaid = {
      ...table,
      rows: table.rows.map((cells) => (cells[0]!.startsWith('`LockQuorumError`') ? ['`LockQuorumError`', ...cells.slice(1)] : cells)),
    };
    expect(errorPageProblems(errors, unsaid)).toEqual([`LockQuorumError extends LockBackendError, and its row in ${PAGE} does not say so`]);
  });
});
