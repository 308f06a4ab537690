import type * as Ioredis from 'ioredis';

/**
 * ioredis through Node's `require`, resolved from the library's own folder. A CommonJS file in both
 * builds (`.cts` compiles to `.cjs`), so that the ES module build too loads ioredis synchronously,
 * when a lock client first needs it (see load-ioredis.ts), and not when the library is imported. The
 * name is written out, so that bundlers see the dependency; inside the caller's try, a bundler that
 * cannot find it warns instead of failing.
 */
export function requireIoredis(): typeof Ioredis {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- synchronous and on demand, in the ESM build too (see above)
  return require('ioredis') as typeof Ioredis;
}
