// npm run docs:build: the documentation site, from the Markdown under docs/, into dist/docs/.
//   1. The API reference, generated from the library's public types with TypeDoc (Markdown, via
//      typedoc-plugin-markdown and typedoc-vitepress-theme) into docs/api/ (git-ignored): the entry
//      points of the package's exports map, `nestjs-distributed-lock`, `nestjs-distributed-lock/testing`
//      and `nestjs-distributed-lock/board`.
//   2. The benchmark reports (results/bench/*.md and their charts) copied to docs/reports/ (git-ignored),
//      so that the site shows them as pages, pictures included.
//   3. VitePress builds the site: local search index, diagrams rendered to SVG, every asset in dist/docs.
// No network: every tool is an npm devDependency and none of them fetches anything.
// `--api-only` stops after steps 1 and 2 (what `npm run docs:dev` needs before VitePress's dev server).
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Application, Converter, OptionDefaults, ReflectionKind } from 'typedoc';

const root = fileURLToPath(new URL('../', import.meta.url));
const docs = `${root}docs`;
const library = `${root}libs/distributed-lock`;

/** Module names as a user imports them (TypeDoc would call them `index`, `testing` and `board`). */
const MODULE_NAMES = { index: 'nestjs-distributed-lock', testing: 'nestjs-distributed-lock/testing', board: 'nestjs-distributed-lock/board' };
/**
 * Words the library's doc comments write with an @ that TSDoc reads as block tags: decorators
 * (`@DistributedLock`), package scopes (`@nestjs/schedule`), a user@host form. Put back into the text.
 */
const DECORATOR_TAGS = new Set([
  '@DistributedLock',
  '@ScheduledLock',
  '@DistributedSemaphore',
  '@Leader',
  '@CurrentLock',
  '@Cron',
  '@Interval',
  '@Timeout',
  '@HealthCheck',
  '@Get',
]);
const TEXT_TAGS = new Set(['@nestjs', '@opentelemetry', '@host']);

export async function generateApiReference() {
  rmSync(`${docs}/api`, { recursive: true, force: true });
  const app = await Application.bootstrapWithPlugins({
    entryPoints: [`${library}/src/index.ts`, `${library}/src/testing/index.ts`, `${library}/src/board/index.ts`],
    tsconfig: `${library}/tsconfig.lib.json`,
    plugin: ['typedoc-plugin-markdown', 'typedoc-vitepress-theme'],
    out: `${docs}/api`,
    docsRoot: docs,
    name: 'API reference',
    readme: 'none',
    excludePrivate: true,
    excludeInternal: true,
    // Members inherited from Node's EventEmitter or Nest's HttpException are theirs to document.
    excludeExternals: true,
    // tsc checks the library (npm run build); TypeDoc only reads its types.
    skipErrorChecking: true,
    disableSources: true,
    blockTags: [...OptionDefaults.blockTags, ...DECORATOR_TAGS, ...TEXT_TAGS],
    // Public classes expose members typed with internal classes (BaseLock.engine, LockClient.connections...):
    // the reference names those types without a page of their own rather than warning about each one.
    validation: { notExported: false, invalidLink: true, unusedMergeModuleWith: true },
    logLevel: 'Warn',
  });
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const module of context.project.getChildrenByKind(ReflectionKind.Module)) {
      module.name = MODULE_NAMES[module.name] ?? module.name;
    }
    for (const reflection of Object.values(context.project.reflections)) {
      if (reflection.comment) mergeDecoratorTags(reflection.comment);
      for (const signature of reflection.signatures ?? []) if (signature.comment) mergeDecoratorTags(signature.comment);
    }
  });
  const project = await app.convert();
  if (!project) throw new Error('TypeDoc could not convert the library (see the errors above)');
  await app.generateOutputs(project);
  if (app.logger.hasErrors()) throw new Error('TypeDoc reported errors');
}

/** "Applies @DistributedLock to routes" was split by TSDoc at the tag: put the tag back into the text. */
function mergeDecoratorTags(comment) {
  const kept = [];
  for (const tag of comment.blockTags) {
    if (!DECORATOR_TAGS.has(tag.tag) && !TEXT_TAGS.has(tag.tag)) {
      kept.push(tag);
      continue;
    }
    const into = kept.length > 0 ? kept[kept.length - 1].content : comment.summary;
    const glued = /^[/:.,)]/.test(tag.content[0]?.text ?? '');
    const previous = into[into.length - 1];
    if (previous?.kind === 'text' && previous.text !== '' && !/\s$/.test(previous.text)) into.push({ kind: 'text', text: ' ' });
    into.push(DECORATOR_TAGS.has(tag.tag) ? { kind: 'code', text: `\`${tag.tag}\`` } : { kind: 'text', text: tag.tag });
    into.push(...(glued ? [] : [{ kind: 'text', text: ' ' }]), ...tag.content);
  }
  comment.blockTags = kept;
}

export function copyReports() {
  const reports = `${docs}/reports`;
  rmSync(reports, { recursive: true, force: true });
  mkdirSync(reports, { recursive: true });
  const bench = `${root}results/bench`;
  copyFileSync(`${bench}/latest.md`, `${reports}/bench-latest.md`);
  copyFileSync(`${bench}/scaling.md`, `${reports}/bench-scaling.md`);
  for (const file of readdirSync(bench)) if (file.endsWith('.svg')) copyFileSync(`${bench}/${file}`, `${reports}/${file}`);
}

async function main() {
  const started = performance.now();
  const seconds = (since) => `${((performance.now() - since) / 1000).toFixed(1)} s`;
  let step = performance.now();
  await generateApiReference();
  copyReports();
  console.log(`docs: API reference and reports in ${seconds(step)}`);
  if (process.argv.includes('--api-only')) return;
  step = performance.now();
  const { build } = await import('vitepress');
  rmSync(`${root}dist/docs`, { recursive: true, force: true }); // no page of an earlier build survives
  await build(docs);
  console.log(`docs: site built in ${seconds(step)}; dist/docs ready in ${seconds(started)}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
