import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packLibrary, ROOT, run } from '../package/packed-library.js';
import { compileSnippets } from '../package/readme-snippets.js';
import { countedErrors, extractSnippets, markdownFiles, type DocSnippet } from './markdown-snippets.js';
import { KNOWN_README_FAILURES, type KnownFailure } from './known-snippet-failures.js';

/**
 * Every TypeScript snippet of README.md and of the documentation site, fenced or inline (the rule is
 * in markdown-snippets.ts), compiled against the packed package as a user's app compiles it. The app
 * lives in .cache/docs-snippets: the tarball unpacked as its node_modules/nestjs-distributed-lock, and
 * the other packages (Nest, ioredis, @types/node) found in the workspace's node_modules above it.
 * Recipes that import TypeORM or BullMQ compile against the small declarations in test/docs/stubs/
 * (the signatures those recipes use, from the packages' documentation): the check is about this
 * library's API, which always comes from the tarball.
 */
describe('TypeScript in the README and the documentation site', () => {
  const app = join(ROOT, '.cache/docs-snippets');

  beforeAll(async () => {
    rmSync(app, { recursive: true, force: true });
    const library = join(app, 'node_modules/nestjs-distributed-lock');
    mkdirSync(library, { recursive: true });
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'docs-snippets', private: true, type: 'module' }, null, 2));
    const { tarball } = await packLibrary(app);
    await run('tar', ['-xzf', tarball, '-C', library, '--strip-components=1']);
    if (existsSync(join(ROOT, 'test/docs/stubs'))) cpSync(join(ROOT, 'test/docs/stubs'), join(app, 'node_modules'), { recursive: true });
  }, 120_000);

  it('compiles, fenced or inline; README failures only as listed in known-snippet-failures.ts', () => {
    const { snippets, optedOut } = extractSnippets(ROOT, markdownFiles(ROOT));
    expect(snippets.filter((snippet) => snippet.file.startsWith('docs/')).length).toBeGreaterThan(20);
    const alternatives = snippets.flatMap((snippet) => (snippet.alternative ? [snippet.alternative] : []));
    const results = compileSnippets(app, [...snippets, ...alternatives]).map((result) => {
      const snippet = result.snippet as DocSnippet;
      return { ...result, snippet, errors: countedErrors(snippet, result.errors) };
    });
    const compiles = new Set(results.filter((result) => result.errors.length === 0).map((result) => result.snippet));
    const failed = results.filter(
      (result) =>
        snippets.includes(result.snippet) && !compiles.has(result.snippet) && !(result.snippet.alternative && compiles.has(result.snippet.alternative)),
    );

    const known = (snippet: DocSnippet): KnownFailure | undefined =>
      snippet.file === 'README.md'
        ? KNOWN_README_FAILURES.find(
            (entry) => entry.kind === snippet.kind && (entry.kind === 'inline' ? snippet.text === entry.snippet : snippet.text.includes(entry.snippet)),
          )
        : undefined;
    const unexpected = failed.filter((result) => !known(result.snippet));
    const stale = KNOWN_README_FAILURES.filter((entry) => !failed.some((result) => known(result.snippet) === entry));
    const noReason = optedOut.filter((optOut) => optOut.reason === '');

    expect(
      unexpected.map(
        ({ snippet, errors, source }) =>
          `${snippet.file}:${snippet.sourceLine} (${snippet.kind}) ${snippet.kind === 'inline' ? snippet.text : ''}\n${errors.join('\n')}\n--- as compiled:\n${source}`,
      ),
    ).toEqual([]);
    expect(stale.map((entry) => `known-snippet-failures.ts lists "${entry.snippet}", which compiles now or is gone: delete the entry`)).toEqual([]);
    expect(noReason.map((optOut) => `${optOut.file}:${optOut.sourceLine}: not-compiled without a reason`)).toEqual([]);
  }, 120_000);

  it('control: an inline span in prose that does not compile fails the check (await using on a value without [Symbol.asyncDispose])', () => {
    const root = mkdtempSync(join(tmpdir(), 'docs-control-'));
    try {
      mkdirSync(join(root, 'docs'));
      writeFileSync(join(root, 'README.md'), '');
      writeFileSync(
        join(root, 'docs/page.md'),
        [
          '# Control',
          '',
          "A handle releases at the end of the block: `await using lock = await locks.lock('x')`.",
          '',
          "A hold count is no handle: `await using count = await locks.getHoldCount('x')`.",
        ].join('\n'),
      );
      const { snippets } = extractSnippets(root, ['docs/page.md']);
      expect(snippets.map((snippet) => [snippet.kind, snippet.sourceLine])).toEqual([
        ['inline', 3],
        ['inline', 5],
      ]);
      const errors = compileSnippets(app, snippets).map((result) => countedErrors(result.snippet as DocSnippet, result.errors));
      expect(errors[0]).toEqual([]);
      expect(errors[1]!.join('\n')).toMatch(/TS2851/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 120_000);
});
