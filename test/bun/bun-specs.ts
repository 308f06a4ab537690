import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../package/packed-library.js';

/** The Bun release the workspace pins (the `bun` devDependency, from the npm registry). */
export const PINNED_BUN = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies.bun!;

/** The runtime a run under Bun names in its title (`under Bun 1.4.5`): the pinned release, which bun-runtime.e2e-spec.ts checks is the one that runs. */
export const BUN_RUNTIME = `Bun ${PINNED_BUN}`;

/**
 * The files Bun's test runner runs (`*.bun.spec.ts` under test/bun), relative to the repository: what
 * bun-runtime.e2e-spec.ts hands to `bun test`, and what the compatibility table's check
 * (test/docs/conformance-matrix.ts) reads as the runs under Bun. Jest does not run them (its testMatch
 * takes `*.e2e-spec.ts` under test/).
 */
export function bunSpecFiles(): string[] {
  return readdirSync(join(ROOT, 'test/bun'))
    .filter((name) => name.endsWith('.bun.spec.ts'))
    .sort()
    .map((name) => `test/bun/${name}`);
}
