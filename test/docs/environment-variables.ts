import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { ROOT } from '../package/packed-library.js';

const SOURCE = join(ROOT, 'libs/distributed-lock/src');
const VARIABLE = /^DISTRIBUTED_LOCK_[A-Z0-9_]+$/;

/** The library's source files (unit specs left out). */
function sourceFiles(dir = SOURCE): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** Whether `node` is the name `env` (`env`, `options.env`, `this.env`). */
function isEnv(node: ts.Node): boolean {
  return (ts.isIdentifier(node) && node.text === 'env') || (ts.isPropertyAccessExpression(node) && node.name.text === 'env');
}

/**
 * Every `DISTRIBUTED_LOCK_*` variable the library's code reads, found in its source where it reads an
 * environment: `env.X`, `env['X']`, or a call that is given `env` and the name `'X'`
 * (`read(env, 'X')`, `configDuration(value, option, env, 'X', ...)`). Names only mentioned (in
 * messages, comments, or as a setting named in an error) do not count. Each with the files that read it.
 */
export function environmentVariablesRead(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const add = (name: string, file: string): void => {
    if (!VARIABLE.test(name)) return;
    const files = found.get(name) ?? [];
    if (!files.includes(file)) files.push(file);
    found.set(name, files);
  };
  for (const path of sourceFiles()) {
    const file = relative(ROOT, path);
    const visit = (node: ts.Node): void => {
      if (ts.isPropertyAccessExpression(node) && isEnv(node.expression)) add(node.name.text, file);
      if (ts.isElementAccessExpression(node) && isEnv(node.expression) && ts.isStringLiteral(node.argumentExpression)) add(node.argumentExpression.text, file);
      if (ts.isCallExpression(node) && node.arguments.some(isEnv)) {
        for (const argument of node.arguments) if (ts.isStringLiteral(argument)) add(argument.text, file);
      }
      ts.forEachChild(node, visit);
    };
    visit(ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, true));
  }
  return found;
}
