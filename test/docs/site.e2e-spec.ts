import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, run } from '../package/packed-library.js';
import { checkSite } from '../../scripts/docs-check-site.mjs';

/**
 * `npm run docs:build` builds the documentation site into dist/docs (API reference from the types,
 * search index, diagrams, benchmark charts), and nothing in it is broken: every internal link and
 * anchor resolves, every picture ships in the build, and no page fetches anything from elsewhere.
 */
describe('the documentation site', () => {
  const site = join(ROOT, 'dist/docs');

  beforeAll(async () => {
    await run(process.execPath, ['scripts/docs-build.mjs'], { cwd: ROOT, timeout: 240_000 });
  }, 300_000);

  it('builds into dist/docs: pages, API reference, local search, diagrams and charts', () => {
    for (const page of ['index.html', 'getting-started.html', 'api/index.html', 'concepts/waiting-and-handover.html', 'results/cost-curves.html']) {
      expect(existsSync(join(site, page))).toBe(true);
    }
    // The API reference is generated from the package's two entry points.
    expect(existsSync(join(site, 'api/nestjs-distributed-lock/classes/LockService.html'))).toBe(true);
    expect(existsSync(join(site, 'api/nestjs-distributed-lock/testing/classes/InMemoryLockStore.html'))).toBe(true);
    expect(existsSync(join(site, 'api/nestjs-distributed-lock/board/classes/DistributedLockBoardModule.html'))).toBe(true);
    // Diagrams are SVG in the page, rendered while building (no script draws them).
    expect(readFileSync(join(site, 'concepts/fencing.html'), 'utf8')).toMatch(/<figure class="diagram"><svg /);
  });

  it('has no broken internal link or anchor, and fetches nothing from elsewhere', () => {
    const { pages, links, problems } = checkSite(site);
    expect(pages).toBeGreaterThan(100);
    expect(links).toBeGreaterThan(1000);
    expect(problems).toEqual([]);
  });
});
