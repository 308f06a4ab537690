import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runsOf } from '../docs/conformance-matrix.js';
import { ROOT } from '../package/packed-library.js';
import { BUN_RUNTIME, bunSpecFiles, PINNED_BUN as PINNED } from './bun-specs.js';

/**
 * The bun binary `npm ci` installed: node_modules/.bin/bun once the package's postinstall has put the
 * binary there, or else the platform package it comes from (@oven/bun-<os>-<arch>), or why neither runs.
 */
function findBun(): { bin: string; version: string } | { missing: string } {
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  const arch = process.arch === 'arm64' ? 'aarch64' : process.arch;
  const platformPackages = ['', '-musl', '-baseline', '-musl-baseline'].map((variant) => join(ROOT, `node_modules/@oven/bun-${os}-${arch}${variant}/bin/bun`));
  for (const bin of [join(ROOT, 'node_modules/.bin/bun'), ...platformPackages]) {
    if (!existsSync(bin)) continue;
    const ran = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 20_000 });
    const version = /^(\d+\.\d+\.\d+)/.exec(ran.stdout ?? '')?.[1];
    if (ran.status === 0 && version) return { bin, version };
  }
  return { missing: `no runnable bun in node_modules (the bun ${PINNED} devDependency: npm ci installs it from the registry)` };
}

/** `bun test` on `files` from the workspace root; resolves with its exit code and output (Bun reports on stderr). */
function bunTest(bin: string, files: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['test', '--timeout', '30000', ...files.map((file) => `./${file}`)], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** How many tests Bun reports as `outcome` ('pass', 'fail', 'skip') per run: the top-level describe, before the first ` > `. */
function testsPerRun(output: string, outcome: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of output.split('\n')) {
    if (!line.startsWith(`(${outcome}) `)) continue;
    const run = line.slice(outcome.length + 3).split(' > ')[0]!;
    counts[run] = (counts[run] ?? 0) + 1;
  }
  return counts;
}

const bun = findBun();

/**
 * Bun as a supported runtime: the conformance core (every lock kind's scripts, exclusion, pub/sub
 * wake-ups, hand-over, fencing tokens, leases, waiters that give up, and each test's clients closed)
 * run by Bun's own test runner over the built package (npm test builds it first), from the files of
 * test/bun/bun-specs.ts. What Bun runs is checked against what the compatibility table is checked
 * against (test/docs/conformance-matrix.ts reads the same files): the same runs, titled `under Bun
 * <the pinned version>`, each with every test it registers passed. Skipped, saying why, when there is
 * no bun to run.
 */
if ('missing' in bun) {
  console.warn(`the conformance core on Bun: skipped, ${bun.missing}`);
  describe('the conformance core on Bun', () => {
    it.skip(`skipped: ${bun.missing}`, () => undefined);
  });
} else {
  describe(`the conformance core on Bun ${bun.version}`, () => {
    it('is the Bun the workspace pins, and the one the README names', () => {
      expect(bun.version).toBe(PINNED);
      expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain(`Bun ${PINNED}`);
    });

    it('passes every run the files of test/bun register, each with all its tests, under the pinned Bun', async () => {
      const files = bunSpecFiles();
      expect(files.length).toBeGreaterThan(0);
      const runs = (await Promise.all(files.map((file) => runsOf({ file, runtime: BUN_RUNTIME })))).flat();
      expect(runs.map((run) => run.runtime)).toEqual(runs.map(() => `Bun ${bun.version}`));
      const expected = Object.fromEntries(runs.map((run) => [run.title, run.tests]));

      const { code, output } = await bunTest(bun.bin, files);
      const total = runs.reduce((sum, run) => sum + run.tests, 0);
      expect({
        code,
        failed: testsPerRun(output, 'fail'),
        skipped: testsPerRun(output, 'skip'),
        ran: /Ran (\d+) tests across (\d+) files?\./.exec(output)?.slice(1),
      }).toEqual({
        code: 0,
        failed: {},
        skipped: {},
        ran: [String(total), String(files.length)],
      });
      expect(testsPerRun(output, 'pass')).toEqual(expected);
    }, 180_000);
  });
}
