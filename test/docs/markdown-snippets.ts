import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { parsesAsTypeScript, type Snippet } from '../package/readme-snippets.js';

/**
 * The TypeScript of the README and of the documentation site (docs/**\/*.md), fenced or inline, as
 * snippets for the README harness (`compileSnippets` in test/package/readme-snippets.ts), which
 * completes each one as a reader would and compiles it against the packed package.
 *
 * Fenced: every ```ts / ```typescript block (VitePress's ```ts [title] or ```ts{2} too), at any
 * indentation (a block inside a list item is indented).
 *
 * Inline: a code span is TypeScript, and compiled, when one of these holds:
 *   1. it is a decorator call, `@Name(...)`, alone, several in a row, or before the parameter it
 *      decorates (`@CurrentLock() lock: LockHandle`): compiled on a method, or on a parameter;
 *   2. it parses as TypeScript statements without a syntax error AND does something: a call, `new`,
 *      `await`, an arrow function or a declaration (`const`, `let`, `using`, `await using`...).
 *      A call of a bare name and nothing else (`unlock(name)`, `getSemaphore(name, { size })`) is
 *      the docs' way of naming a method of the object under discussion, not code, and is skipped.
 * So `await using lock = await locks.lock('x')` and `lock.throwIfLost()` are compiled; option names
 * (`waitTime`), property paths (`lock.token`), file paths (`libs/distributed-lock/src`, which parse
 * as divisions but do nothing), key patterns (`<prefix>{name}:fair`), commands and signatures with
 * `?` (`tryLock(name, waitTime?, leaseTime?)`, a syntax error) are not.
 *
 * An inline span runs inside an async function whose parameters are the names the docs use for the
 * library's objects ({@link CONVENTIONAL_NAMES}: `locks` is a LockService, `lock` a LockHandle...),
 * and whose `this` has `locks` and `lockService`; other names are `any`. A callback's parameters have
 * no contextual type there (`(info) => result`), so "implicitly any" errors do not count for inline
 * spans. Fenced snippets that use a conventional name without declaring it get it typed the same way.
 *
 * Opting out, always with a reason: an HTML comment `<!-- not-compiled: why -->` as the line right
 * above a fence (a blank line between is allowed), or right after an inline span. A marker without a
 * reason is reported as a failure. Pages generated from the types (docs/api) and copied reports
 * (docs/reports) are not prose and are not read.
 */

export interface DocSnippet extends Snippet {
  /** Markdown file, relative to the repository root. */
  file: string;
  /** 1-based line of the fence, or of the inline span, in that file. */
  sourceLine: number;
  kind: 'fenced' | 'inline';
  /** The snippet as written in the Markdown (for inline spans: the span's text). */
  text: string;
  /** Another way to compile it; the snippet fails only if both fail (a lone decorator: on a method, or on a parameter). */
  alternative?: DocSnippet;
}

export interface OptOut {
  file: string;
  sourceLine: number;
  kind: 'fenced' | 'inline';
  text: string;
  reason: string;
}

export interface MarkdownSnippets {
  snippets: DocSnippet[];
  optedOut: OptOut[];
  /** Inline spans seen, whether compiled or not (for the record). */
  inlineSpans: number;
}

/**
 * What the docs call the library's objects, and a lock's name; a snippet that uses one of these
 * without declaring it gets this type (`name` would otherwise be the DOM's deprecated `window.name`).
 */
export const CONVENTIONAL_NAMES: Record<string, string> = {
  locks: `import('nestjs-distributed-lock').LockService`,
  lockService: `import('nestjs-distributed-lock').LockService`,
  lock: `import('nestjs-distributed-lock').LockHandle`,
  permit: `import('nestjs-distributed-lock').PermitsHandle`,
  semaphore: `import('nestjs-distributed-lock').Semaphore`,
  leadership: `import('nestjs-distributed-lock').Leadership`,
  election: `import('nestjs-distributed-lock').LeaderElection`,
  app: `import('@nestjs/common').INestApplication`,
  name: 'string',
};

const OPT_OUT = /^<!--\s*not-compiled:?\s*(.*?)\s*-->$/;
const INLINE_OPT_OUT = /^\s*<!--\s*not-compiled:?\s*(.*?)\s*-->/;
const FENCE = /^(\s*)(`{3,}|~{3,})\s*([^\s`{[]*)/;
/** "Implicitly has an 'any' type" (parameters, binding elements, this): no context types them inline. */
const IMPLICIT_ANY = new Set([7006, 7031, 7041]);

/** README.md and every page of docs/, relative to root (generated pages left out). */
export function markdownFiles(root: string): string[] {
  const files = ['README.md'];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!['.vitepress', 'api', 'reports', 'public'].includes(entry.name)) walk(path);
      } else if (entry.name.endsWith('.md')) files.push(path);
    }
  };
  walk('docs');
  return files;
}

let nextId = 1;

export function extractSnippets(root: string, files: string[]): MarkdownSnippets {
  const result: MarkdownSnippets = { snippets: [], optedOut: [], inlineSpans: 0 };
  for (const file of files) {
    const markdown = readFileSync(join(root, file), 'utf8');
    extractFrom(relative(root, join(root, file)), markdown, result);
  }
  return result;
}

function extractFrom(file: string, markdown: string, result: MarkdownSnippets): void {
  const lines = markdown.split('\n');
  let paragraph: { line: number; text: string[] } | undefined;
  const flush = (): void => {
    if (paragraph) inlineSpans(file, paragraph.line, paragraph.text.join('\n'), result);
    paragraph = undefined;
  };
  let inComment = false;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    if (inComment) {
      if (line.includes('-->')) inComment = false;
      continue;
    }
    if (/^\s*<!--/.test(line) && !line.includes('-->')) {
      flush();
      inComment = true;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const [, indent, marker, language] = fence;
      const start = index;
      const code: string[] = [];
      while (++index < lines.length && !new RegExp(`^\\s*${marker![0]}{${marker!.length},}\\s*$`).test(lines[index]!)) {
        code.push(lines[index]!.startsWith(indent!) ? lines[index]!.slice(indent!.length) : lines[index]!.trimStart());
      }
      if (language === 'ts' || language === 'typescript') {
        const optOut = markerAbove(lines, start);
        const text = code.join('\n');
        if (optOut !== undefined) result.optedOut.push({ file, sourceLine: start + 1, kind: 'fenced', text, reason: optOut });
        else result.snippets.push(fenced(file, start + 1, text));
      }
      continue;
    }
    if (line.trim() === '' || /^\s*\|/.test(line) || /^\s*#/.test(line)) {
      flush();
      // A table row or a heading is a unit of its own.
      if (line.trim() !== '') inlineSpans(file, index + 1, /^\s*\|/.test(line) ? line.replace(/\\\|/g, '|') : line, result);
      continue;
    }
    if (/^\s*([-*+]|\d+\.)\s/.test(line)) flush(); // a list item starts a new block
    paragraph ??= { line: index + 1, text: [] };
    paragraph.text.push(line);
  }
  flush();
}

function markerAbove(lines: string[], fenceIndex: number): string | undefined {
  let index = fenceIndex - 1;
  while (index >= 0 && lines[index]!.trim() === '') index--;
  const match = index >= 0 ? OPT_OUT.exec(lines[index]!.trim()) : null;
  return match ? match[1]! : undefined;
}

function fenced(file: string, sourceLine: number, text: string): DocSnippet {
  return { line: nextId++, file, sourceLine, kind: 'fenced', text, code: withConventionalNames(text) };
}

/** CommonMark code spans: a run of n backticks up to the next run of exactly n. */
function inlineSpans(file: string, firstLine: number, block: string, result: MarkdownSnippets): void {
  const withoutComments = block.replace(/<!--[\s\S]*?-->/g, (comment) => (INLINE_OPT_OUT.test(comment) ? comment : ' '.repeat(comment.length)));
  let index = 0;
  while (index < withoutComments.length) {
    const open = /`+/g;
    open.lastIndex = index;
    const start = open.exec(withoutComments);
    if (!start) break;
    if (start.index > 0 && withoutComments[start.index - 1] === '\\') {
      index = start.index + start[0].length;
      continue;
    }
    const ticks = start[0].length;
    const close = new RegExp(`(?<!\`)\`{${ticks}}(?!\`)`, 'g');
    close.lastIndex = start.index + ticks;
    const end = close.exec(withoutComments);
    if (!end) {
      index = start.index + ticks;
      continue;
    }
    let text = withoutComments.slice(start.index + ticks, end.index).replace(/\n/g, ' ');
    if (/^ .* $/.test(text) && text.trim() !== '') text = text.slice(1, -1);
    const sourceLine = firstLine + withoutComments.slice(0, start.index).split('\n').length - 1;
    index = end.index + ticks;
    result.inlineSpans++;
    const optOut = INLINE_OPT_OUT.exec(withoutComments.slice(index));
    if (optOut) {
      result.optedOut.push({ file, sourceLine, kind: 'inline', text, reason: optOut[1]! });
      continue;
    }
    const codes = inlineCode(text);
    if (codes === undefined) continue;
    const [code, alternative] = codes.map((source): DocSnippet => ({ line: nextId++, file, sourceLine, kind: 'inline', text, code: source }));
    result.snippets.push({ ...code!, ...(alternative ? { alternative } : {}) });
  }
}

/** The code to compile for an inline span (and another way to compile it), or undefined when the span is not TypeScript (see the rule above). */
export function inlineCode(text: string): string[] | undefined {
  const span = text.trim();
  if (/^@[A-Za-z_$][\w$]*\(/.test(span)) return decoratorCode(span);
  if (!parses(span)) return undefined;
  const source = ts.createSourceFile('span.ts', span, ts.ScriptTarget.Latest, true);
  if (!doesSomething(source) || isBareCall(source) || isBlock(source)) return undefined;
  const parameters = Object.entries(CONVENTIONAL_NAMES).map(([name, type]) => `${name}: ${type}`);
  // `{ prefix }` in a span names an option: like any other unknown name, `any` (the harness declares
  // unknown names, but a shorthand property is not reported as one).
  const shorthand = shorthandNames(source).filter((name) => CONVENTIONAL_NAMES[name] === undefined);
  return [
    [
      `interface InlineHost { [member: string]: any; locks: ${CONVENTIONAL_NAMES.locks}; lockService: ${CONVENTIONAL_NAMES.lockService} }`,
      `export async function inlineSnippet(this: InlineHost, ${parameters.join(', ')}): Promise<void> {`,
      ...shorthand.map((name) => `let ${name}!: any;`),
      '{',
      span,
      '}',
      '}',
    ].join('\n'),
  ];
}

function decoratorCode(span: string): string[] | undefined {
  const decorators = /^(\s*@[A-Za-z_$][\w$.]*\((?:[^()]|\([^()]*\))*\))+/.exec(span);
  if (!decorators) return undefined;
  const rest = span.slice(decorators[0].length).trim();
  const list = decorators[0].trim();
  // A parameter after them: on that parameter. Alone: on a method, or else on a parameter.
  if (/^[A-Za-z_$][\w$]*\??\s*:/.test(rest)) {
    const onParameter = `export class InlineParameter {\n  method(${span}) {}\n}`;
    return parses(onParameter) ? [withConventionalNames(onParameter)] : undefined;
  }
  // A signature written as a decorator (`@Redlock(keys, duration?)`, `@X((a) => ...)`) does not parse: not code.
  if (rest !== '' || !parses(`export class InlineDecorated {\n  ${list}\n  method() {}\n}`)) return undefined;
  return [
    withConventionalNames(`export class InlineDecorated {\n  ${list}\n  method(..._args: any[]): any {}\n}`),
    withConventionalNames(`export class InlineParameter {\n  method(${list} _parameter: any) {}\n}`),
  ];
}

function shorthandNames(source: ts.SourceFile): string[] {
  const names: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isShorthandPropertyAssignment(node)) names.push(node.name.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return [...new Set(names)];
}

/** `{ name, token, unlock() }`: a block statement, which nobody writes inline; it describes an object. */
function isBlock(source: ts.SourceFile): boolean {
  return source.statements.length === 1 && ts.isBlock(source.statements[0]!);
}

function parses(code: string): boolean {
  return parsesAsTypeScript(code);
}

function doesSomething(source: ts.SourceFile): boolean {
  let found = false;
  const visit = (node: ts.Node): void => {
    if (found) return;
    if (
      ts.isCallExpression(node) ||
      ts.isNewExpression(node) ||
      ts.isAwaitExpression(node) ||
      ts.isArrowFunction(node) ||
      ts.isVariableDeclarationList(node) ||
      ts.isDecorator(node)
    ) {
      found = true;
      return;
    }
    ts.forEachChild(node, visit);
  };
  ts.forEachChild(source, visit);
  return found;
}

/** `name(...)` and nothing else: the docs' notation for a method of the object being discussed. */
function isBareCall(source: ts.SourceFile): boolean {
  if (source.statements.length !== 1) return false;
  const statement = source.statements[0]!;
  return ts.isExpressionStatement(statement) && ts.isCallExpression(statement.expression) && ts.isIdentifier(statement.expression.expression);
}

/**
 * A fenced snippet that uses `locks`, `lock`... without declaring them gets them declared with their
 * type (so its calls are checked against the library), as `let lock!: import('nestjs-distributed-lock').LockHandle;`
 * (no import declaration that could clash with the snippet's own), which is valid both at
 * the top of a module and inside the function the harness wraps statements that use `this` in. A
 * snippet of class members or lone decorators (a syntax error on its own) is left as it is.
 */
export function withConventionalNames(code: string): string {
  if (!parses(code)) return code;
  const source = ts.createSourceFile('snippet.ts', code, ts.ScriptTarget.Latest, true);
  const declared = new Set<string>();
  const used = new Set<string>();
  const visit = (node: ts.Node): void => {
    if ((ts.isVariableDeclaration(node) || ts.isParameter(node) || ts.isBindingElement(node)) && ts.isIdentifier(node.name)) {
      declared.add(node.name.text);
    } else if ((ts.isFunctionDeclaration(node) || ts.isClassDeclaration(node)) && node.name) {
      declared.add(node.name.text);
    } else if (ts.isImportSpecifier(node) || ts.isImportClause(node) || ts.isNamespaceImport(node)) {
      if (node.name) declared.add(node.name.text);
    } else if (ts.isIdentifier(node) && CONVENTIONAL_NAMES[node.text] !== undefined && isReference(node)) {
      used.add(node.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  const free = [...used].filter((name) => !declared.has(name));
  if (free.length === 0) return code;
  return [...free.map((name) => `let ${name}!: ${CONVENTIONAL_NAMES[name]};`), code].join('\n');
}

function isReference(node: ts.Identifier): boolean {
  const parent = node.parent;
  if (ts.isPropertyAccessExpression(parent) && parent.name === node) return false;
  if ((ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent) || ts.isMethodDeclaration(parent)) && parent.name === node) return false;
  if (ts.isPropertySignature(parent) || ts.isMethodSignature(parent)) return false;
  return true;
}

/** Errors that count for a snippet: all of them, except implicit any for inline spans. */
export function countedErrors(snippet: DocSnippet, errors: string[]): string[] {
  if (snippet.kind === 'fenced') return errors;
  return errors.filter((error) => !IMPLICIT_ANY.has(Number(/TS(\d+)/.exec(error)?.[1])));
}
