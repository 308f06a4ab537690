import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../package/packed-library.js';

/** The Bun release the workspace pins (the `bun` devDependency, from the npm registry). */
const PINNED = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies.bun!;

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

/** `bun test` on `file` from the workspace root; resolves with its exit code and output (Bun reports on stderr). */
function bunTest(bin: string, file: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['test', '--timeout', '30000', file], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

const bun = findBun();

/**
 * Bun as a supported runtime: the conformance core (every lock kind's scripts, exclusion, pub/sub
 * wake-ups, hand-over, fencing tokens, leases, waiters that give up, and each test's clients closed)
 * in single mode, through ioredis and through node-redis 6, run by Bun's own test runner over the
 * built package (npm test builds it first). Skipped, saying why, when there is no bun to run.
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

    it('passes in single mode, through ioredis and through node-redis 6', async () => {
      const { code, output } = await bunTest(bun.bin, './test/bun/conformance-core.bun.spec.ts');
      const count = (what: string): number => Number(new RegExp(`^\\s*(\\d+) ${what}$`, 'm').exec(output)?.[1] ?? NaN);
      const summary = output.slice(output.lastIndexOf('\n', output.search(/^\s*\d+ pass$/m)));
      expect({ code, fail: count('fail'), summary }).toEqual({ code: 0, fail: 0, summary: expect.stringMatching(/Ran \d+ tests across 1 file/) });
      // Both runs took place, each with its core's tests.
      for (const suite of ['lock conformance core: single > ', 'lock conformance core: single through node-redis 6 > ']) {
        expect(output.split('\n').filter((line) => line.startsWith(`(pass) ${suite}`)).length).toBeGreaterThanOrEqual(25);
      }
      expect(count('pass')).toBe(Number(/Ran (\d+) tests/.exec(output)?.[1]));
    }, 180_000);
  });
}
