#!/usr/bin/env node
// Fails when the library's (or the topology helper's) modules import each other in a cycle, type-only
// imports included: a cycle through types still ties files together for a reader and for the next
// change. madge and dependency-cruiser do not support this project's TypeScript 6 (with Node 20),
// and eslint-plugin-import-x's no-cycle skips type-only imports, so this reads the imports with
// TypeScript's own pre-processor and looks for strongly connected files (Tarjan).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const roots = process.argv.slice(2).length ? process.argv.slice(2) : ['libs/distributed-lock/src', 'libs/redis-topology/src'];

function sourceFiles(dir) {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') && !path.endsWith('.spec.ts') ? [resolve(path)] : [];
  });
}

const files = roots.flatMap(sourceFiles);
const known = new Set(files);
/** file -> files it imports (relative imports only; `./x.js` names `./x.ts`). */
const graph = new Map(
  files.map((file) => {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles
      .map(({ fileName }) => fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => resolve(dirname(file), name.replace(/\.js$/, '.ts')))
      .filter((target) => known.has(target));
    return [file, [...new Set(targets)]];
  }),
);

// Tarjan's strongly connected components: every component of more than one file is a cycle.
let index = 0;
const indices = new Map();
const lowlinks = new Map();
const stack = [];
const onStack = new Set();
const cycles = [];
function visit(file) {
  indices.set(file, index);
  lowlinks.set(file, index);
  index += 1;
  stack.push(file);
  onStack.add(file);
  for (const target of graph.get(file)) {
    if (!indices.has(target)) {
      visit(target);
      lowlinks.set(file, Math.min(lowlinks.get(file), lowlinks.get(target)));
    } else if (onStack.has(target)) {
      lowlinks.set(file, Math.min(lowlinks.get(file), indices.get(target)));
    }
  }
  if (lowlinks.get(file) === indices.get(file)) {
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1) cycles.push(component);
  }
}
for (const file of files) if (!indices.has(file)) visit(file);

if (cycles.length === 0) {
  console.log(`import cycles: none (${files.length} files)`);
} else {
  console.error(`import cycles: ${cycles.length}`);
  for (const cycle of cycles)
    console.error(
      `- ${cycle
        .map((file) => relative(process.cwd(), file))
        .sort()
        .join('\n  ')}`,
    );
  process.exit(1);
}
