// `npm pack` / `npm publish` (prepack): what the package ships beside its code and its own CHANGELOG.
// The repository's README, CONTRIBUTING and LICENSE, and the documentation's Markdown (docs/, without
// what the site build generates there), are copied in, so that the README's links to docs/ resolve in
// the installed package as they do in the repository. The one link that points elsewhere in the
// repository than in the package is rewritten: libs/distributed-lock/CHANGELOG.md is the package's
// CHANGELOG.md. The copies are git-ignored; the repository root is the source.
// test/package/readme-links.e2e-spec.ts checks the links in the repository and in the tarball.
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';

const repository = new URL('../../../', import.meta.url);
const pkg = new URL('../', import.meta.url);

/** Repository paths that the package ships elsewhere, as Markdown link targets. */
const MOVED = [['libs/distributed-lock/CHANGELOG.md', 'CHANGELOG.md']];

/** The site's own folders under docs/: its configuration, assets and generated pages (API reference, reports). */
const SITE_ONLY = new Set(['.vitepress', 'public', 'api', 'reports']);

for (const file of ['README.md', 'CONTRIBUTING.md']) {
  let markdown = readFileSync(new URL(file, repository), 'utf8');
  for (const [from, to] of MOVED) markdown = markdown.replaceAll(`](${from}`, `](${to}`);
  writeFileSync(new URL(file, pkg), markdown);
}
cpSync(new URL('LICENSE', repository), new URL('LICENSE', pkg));

const docs = new URL('docs/', pkg);
rmSync(docs, { recursive: true, force: true });
cpSync(new URL('docs/', repository), docs, {
  recursive: true,
  filter: (source) => !SITE_ONLY.has(basename(source)),
});
