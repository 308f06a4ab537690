import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file runs from dist/bench/). */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The installed version of an npm package, read from its package.json ('' if not installed). */
export function installedVersion(packageName: string): string {
  try {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'node_modules', packageName, 'package.json'), 'utf8')) as { version?: string };
    return manifest.version ?? '';
  } catch {
    return '';
  }
}
