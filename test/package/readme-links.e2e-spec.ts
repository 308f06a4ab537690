import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brokenLinks, relativeLinks } from './markdown-links.js';
import { LIBRARY, packLibrary, ROOT, run } from './packed-library.js';

/** The Markdown a reader of the package opens first, and what it links to. */
const READMES = ['README.md', 'CONTRIBUTING.md'];

/**
 * The README's and CONTRIBUTING's links (to docs/, the CHANGELOG, each other, headings) resolve in the
 * repository and in the installed package: the tarball ships the documentation's Markdown, and
 * prepack (scripts/copy-docs.mjs) points the CHANGELOG link at the package's own. Packed once.
 */
describe('links of the README, in the repository and in the packed package', () => {
  let unpacked: string;

  beforeAll(async () => {
    unpacked = mkdtempSync(join(tmpdir(), 'readme-links-'));
    const { tarball } = await packLibrary(unpacked);
    mkdirSync(join(unpacked, 'package'));
    await run('tar', ['-xzf', tarball, '-C', join(unpacked, 'package'), '--strip-components=1']);
  }, 180_000);

  afterAll(() => {
    if (unpacked) rmSync(unpacked, { recursive: true, force: true });
  });

  it('resolve in the repository', () => {
    const links = READMES.flatMap((file) => relativeLinks(readFileSync(join(ROOT, file), 'utf8')));
    expect(links.filter((link) => link.target.startsWith('docs/')).length).toBeGreaterThan(30);
    expect(links.some((link) => link.target === 'libs/distributed-lock/CHANGELOG.md')).toBe(true);
    expect(READMES.flatMap((file) => brokenLinks(ROOT, file))).toEqual([]);
  });

  it('resolve in the installed package, which ships the docs and points the CHANGELOG link at its own', () => {
    const package_ = join(unpacked, 'package');
    const readme = readFileSync(join(package_, 'README.md'), 'utf8');
    expect(relativeLinks(readme).some((link) => link.target === 'CHANGELOG.md')).toBe(true);
    expect(READMES.flatMap((file) => brokenLinks(package_, file))).toEqual([]);
  });

  it('the package names its repository, home page and issue tracker, on one repository', () => {
    const manifest = JSON.parse(readFileSync(join(LIBRARY, 'package.json'), 'utf8')) as {
      repository: { url: string; directory: string };
      homepage: string;
      bugs: { url: string };
    };
    const repository = /^git\+(https:\/\/.+)\.git$/.exec(manifest.repository.url)?.[1];
    expect(repository).toBeDefined();
    expect(manifest.repository.directory).toBe('libs/distributed-lock');
    expect(manifest.homepage.startsWith(`${repository}#`)).toBe(true);
    expect(manifest.bugs.url).toBe(`${repository}/issues`);
  });

  it('control: a link to a missing page, a heading that is not there and a path out of the tree are reported', () => {
    const root = mkdtempSync(join(tmpdir(), 'links-control-'));
    try {
      mkdirSync(join(root, 'docs'));
      writeFileSync(join(root, 'docs/page.md'), '# A page\n\n## Its part\n');
      writeFileSync(
        join(root, 'README.md'),
        ['# Read me', '', '[ok](docs/page.md#its-part), [gone](docs/gone.md), [no part](docs/page.md#other)', '[out](../x.md) `[code](not/a/link.md)`'].join(
          '\n',
        ),
      );
      expect(brokenLinks(root, 'README.md')).toEqual([
        'README.md:3: docs/gone.md does not exist',
        'README.md:3: docs/page.md#other: docs/page.md has no heading #other',
        `README.md:4: ../x.md leads out of ${root}`,
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
