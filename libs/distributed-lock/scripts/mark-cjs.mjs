// The CommonJS build (dist/cjs, from tsconfig.cjs.json) sits inside a "type": "module" package:
// this package.json scope makes Node, Jest and TypeScript read its .js and .d.ts as CommonJS.
import { mkdirSync, writeFileSync } from 'node:fs';

const dir = new URL('../dist/cjs/', import.meta.url);
mkdirSync(dir, { recursive: true });
writeFileSync(new URL('package.json', dir), '{ "type": "commonjs" }\n');
