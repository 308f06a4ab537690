// `npm pack` / `npm publish` (prepack): the repository's README and LICENSE go into the tarball
// beside the package's own CHANGELOG. The copies are git-ignored; the repository root is the source.
import { copyFileSync } from 'node:fs';

for (const file of ['README.md', 'LICENSE']) {
  copyFileSync(new URL(`../../../${file}`, import.meta.url), new URL(`../${file}`, import.meta.url));
}
