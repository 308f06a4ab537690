#!/usr/bin/env node
// Fails when a folder of the library's core imports a folder above it (type-only imports included),
// or when the library's top folders import across their own order. The orders are written once, at the
// top of libs/distributed-lock/src/ARCHITECTURE.md, in lines of the form
//   Layers of `core/`, bottom first: errors → util → ...
//   Layers of `src/`, bottom first: core → testing → ...
// so the document and the check cannot drift apart. Imports are read with TypeScript's pre-processor,
// as check-import-cycles.mjs reads them.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const SRC = resolve('libs/distributed-lock/src');
const architecture = readFileSync(join(SRC, 'ARCHITECTURE.md'), 'utf8');

/** The folders named on the ARCHITECTURE.md line that starts with `prefix`, bottom first. */
function layers(prefix) {
  const line = architecture.split('\n').find((text) => text.startsWith(prefix));
  if (!line) {
    console.error(`layers: ARCHITECTURE.md has no line starting with "${prefix}"`);
    process.exit(1);
  }
  return line
    .slice(prefix.length)
    .split('→')
    .map((name) => name.replace(/[`.\s]/g, ''))
    .filter(Boolean);
}

const checks = [
  { root: join(SRC, 'core'), order: layers('Layers of `core/`, bottom first:'), what: 'core/' },
  { root: SRC, order: layers('Layers of `src/`, bottom first:'), what: 'src/' },
];

function sourceFiles(dir) {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') && !path.endsWith('.spec.ts') ? [resolve(path)] : [];
  });
}

/** The folder of `root` a file sits in ('.' for files directly in it). */
function folderOf(root, file) {
  const rel = relative(root, file);
  return rel.includes(sep) ? rel.split(sep)[0] : '.';
}

const problems = [];
let counted = 0;
for (const { root, order, what } of checks) {
  const rank = new Map(order.map((folder, i) => [folder, i]));
  for (const folder of readdirSync(root)) {
    if (statSync(join(root, folder)).isDirectory() && !rank.has(folder))
      problems.push(`${what}${folder}/ is not in the layer order of ${what} in ARCHITECTURE.md`);
  }
  for (const file of sourceFiles(root)) {
    const from = folderOf(root, file);
    counted += 1;
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = resolve(dirname(file), fileName);
      if (!target.startsWith(root + sep)) continue;
      const to = folderOf(root, target);
      // Files at the root of `root` (core/lock-client.ts, src/index.ts) stand above every folder.
      if (from === '.' || to === from) continue;
      if (to === '.') {
        problems.push(`${relative(process.cwd(), file)} imports ${relative(process.cwd(), target)}, which stands above every folder of ${what}`);
        continue;
      }
      if (rank.get(to) > rank.get(from)) {
        problems.push(`${relative(process.cwd(), file)} (${from}) imports ${fileName} (${to}), a folder above it in ${what}`);
      }
    }
  }
}

if (problems.length === 0) {
  console.log(`layers: every import points down (${counted} files; orders in ARCHITECTURE.md)`);
} else {
  console.error(`layers: ${problems.length} import(s) against the order written in libs/distributed-lock/src/ARCHITECTURE.md`);
  for (const problem of problems) console.error(`- ${problem}`);
  process.exit(1);
}
