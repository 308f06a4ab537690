import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { extractSnippets, inlineCode, withConventionalNames } from './markdown-snippets.js';

/** Which Markdown counts as TypeScript for the snippet check (the rule is in markdown-snippets.ts). */
describe('the snippet rule', () => {
  it.each([
    "await using lock = await locks.lock('x')",
    'lock.throwIfLost()',
    "const lock = await this.locks.lock('order:1')",
    'new FencedResource(redis, fenceKey)',
    "onBusy: () => ({ status: 'busy' })",
    "@DistributedLock({ name: 'catalog:{params.id}', kind: 'read' })",
    '@CurrentLock() lock: LockHandle',
    "@Get('health') @HealthCheck()",
    "getLock('x').inspect()",
  ])('compiles the inline span `%s`', (span) => {
    expect(inlineCode(span)).toBeDefined();
  });

  it.each([
    'waitTime',
    'lock.token',
    'libs/distributed-lock/src/core',
    'results/bench/latest.md',
    '<prefix>{name}:fair',
    'leader:<name>',
    'tryLock(name, waitTime?, leaseTime?)',
    'unlock(name)',
    'getSemaphore(name, { size })',
    '{ name, token, signal, isHeld, throwIfLost(), unlock() }',
    'npm run docs:build',
    'DISTRIBUTED_LOCK_REDIS_MODE=cluster',
    "'500ms'",
    'LOCK_NOT_HELD',
    '@DistributedLock',
    'SET NX PX',
  ])('leaves `%s` alone', (span) => {
    expect(inlineCode(span)).toBeUndefined();
  });

  it('types the names the docs use for the library objects when a snippet does not declare them', () => {
    expect(withConventionalNames('await lock.unlock();')).toContain("let lock!: import('nestjs-distributed-lock').LockHandle;");
    expect(withConventionalNames("const lock = await locks.lock('a');\nawait lock.unlock();")).not.toContain('let lock!');
  });

  it('reads fences at any indentation, spans of any backtick count, table cells, and opt-outs with their reason', () => {
    const root = mkdtempSync(join(tmpdir(), 'docs-rule-'));
    try {
      mkdirSync(join(root, 'docs'));
      writeFileSync(join(root, 'README.md'), '');
      writeFileSync(
        join(root, 'docs/page.md'),
        [
          '# Page',
          '',
          '- a list item:',
          '',
          '  ```ts',
          "  await locks.lock('a');",
          '  ```',
          '',
          '<!-- not-compiled: pseudo-code -->',
          '```ts',
          'lock the world;',
          '```',
          '',
          'Use `` nameFromArgs: (id: string) => `order:${id}` `` and `lock.throwIfLost()` <!-- not-compiled: an example of the marker -->.',
          '',
          "| `x` | `locks.tryLock('a') \\|\\| undefined` |",
          '| --- | --- |',
        ].join('\n'),
      );
      const { snippets, optedOut } = extractSnippets(root, ['docs/page.md']);
      expect(snippets.map((snippet) => [snippet.kind, snippet.sourceLine, snippet.text])).toEqual([
        ['fenced', 5, "await locks.lock('a');"],
        ['inline', 14, 'nameFromArgs: (id: string) => `order:${id}`'],
        ['inline', 16, "locks.tryLock('a') || undefined"],
      ]);
      expect(optedOut.map((optOut) => [optOut.kind, optOut.sourceLine, optOut.reason])).toEqual([
        ['fenced', 10, 'pseudo-code'],
        ['inline', 14, 'an example of the marker'],
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
