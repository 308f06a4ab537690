// The declarations name types of optional peers (ioredis: the `connection` option's ioredis settings,
// `RedisClient`). An app without that peer (a node-redis or GLIDE user) would fail to compile them
// with `skipLibCheck: false` ("Cannot find module 'ioredis'"). Each such import in dist/**/*.d.ts gets a
// `@ts-ignore` (TypeScript drops comments on imports when it writes declarations, so it is added here):
// without the peer those types are `any`, and nothing such an app uses needs them (`client` is typed
// structurally). Run after every build (tsc -b rewrites only the files it re-emits; this is idempotent).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const optional = Object.keys(pkg.peerDependenciesMeta ?? {}).filter((name) => pkg.peerDependenciesMeta[name].optional);
const importOf = new RegExp(`^import type .* from '(${optional.map((name) => name.replace(/[/.]/g, '\\$&')).join('|')})(/[^']*)?';$`);
const IGNORE = '// @ts-ignore optional peer dependency: where it is not installed, these types are any';

for (const entry of readdirSync(join(root, 'dist'), { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.d.ts')) continue;
  const file = join(entry.parentPath, entry.name);
  const lines = readFileSync(file, 'utf8').split('\n');
  const marked = lines.flatMap((line, index) => (importOf.test(line) && lines[index - 1] !== IGNORE ? [IGNORE, line] : [line]));
  if (marked.length !== lines.length) writeFileSync(file, marked.join('\n'));
}
