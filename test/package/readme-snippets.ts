import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/**
 * The README's TypeScript snippets, compiled as a user's app compiles them. A snippet is often a
 * fragment (a route method, a few decorators, statements inside a service), so each one is completed
 * the way a reader completes it, and no more:
 * - names it uses but does not import are imported from the packages an app has (the library first);
 *   a name that is only a type is imported with `import type`, as isolatedModules wants it;
 * - names no package exports (`OrdersModule`, `id`, `from`) are declared as `any`;
 * - class members are put in a class, lone decorators each on a method of their own, statements that
 *   use `this` in a method;
 * - `this` has the collaborators the README injects (`locks: LockService`, `health`, `lockHealth`)
 *   and anything else as `any`, as have the snippet's own classes (`this.charge(...)`).
 * Everything that comes from this library keeps its real types, so a call the API no longer has, a
 * wrong option or a wrong argument fails the test.
 */

export interface Snippet {
  /** Line of the opening fence in the README. */
  line: number;
  code: string;
}

export function readmeSnippets(markdown: string): Snippet[] {
  const snippets: Snippet[] = [];
  const lines = markdown.split('\n');
  for (let index = 0; index < lines.length; index++) {
    if (!/^```(ts|typescript)\s*$/.test(lines[index]!)) continue;
    const start = index;
    const code: string[] = [];
    while (++index < lines.length && !/^```\s*$/.test(lines[index]!)) code.push(lines[index]!);
    snippets.push({ line: start + 1, code: code.join('\n') });
  }
  return snippets;
}

/** The packages a reader's app would have, searched in this order for a name a snippet uses. */
export const SNIPPET_MODULES = [
  'nestjs-distributed-lock',
  'nestjs-distributed-lock/testing',
  'nestjs-distributed-lock/board',
  '@nestjs/common',
  '@nestjs/core',
  '@nestjs/testing',
  '@nestjs/schedule',
  '@nestjs/terminus',
  '@nestjs/config',
  'ioredis',
];

/** What the README's examples inject under these names; `this.<anything else>` is `any`. */
const HOST = `interface SnippetHost {
  [member: string]: any;
  locks: LockService;
  lockService: LockService;
  lockHealth: DistributedLockHealthIndicator;
  health: HealthCheckService;
}`;
const HOST_NAMES = ['LockService', 'DistributedLockHealthIndicator', 'HealthCheckService'];

/** Compiler options of the Nest 12 application template (tsconfig.json of `nest new`). */
export const APP_COMPILER_OPTIONS: ts.CompilerOptions = {
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2023,
  esModuleInterop: true,
  isolatedModules: true,
  emitDecoratorMetadata: true,
  experimentalDecorators: true,
  allowSyntheticDefaultImports: true,
  strict: true,
  strictPropertyInitialization: false,
  skipLibCheck: true,
  types: ['node'],
  noEmit: true,
};

const MISSING_NAME_CODES = new Set([2304, 2552, 2503]); // Cannot find name / did you mean / namespace

export interface SnippetResult {
  snippet: Snippet;
  source: string;
  errors: string[];
}

/**
 * Writes each snippet, completed, into `<appDir>/readme-snippets/` and type-checks them all with the
 * packages installed in `appDir` (an ESM app: `"type": "module"`, so top-level await is allowed).
 * Each snippet is its own module (`export {}` ends it), so a round compiles only the snippets that
 * changed; the packages' declaration files are parsed once for every program (`declarationsOnce`).
 */
export function compileSnippets(appDir: string, snippets: Snippet[]): SnippetResult[] {
  const dir = join(appDir, 'readme-snippets');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  const host = declarationsOnce(APP_COMPILER_OPTIONS);
  const exported = exportedNames(appDir, host);
  const entries = snippets.map((snippet) => ({
    snippet,
    file: join(dir, `readme-line-${snippet.line}.ts`),
    free: new Set<string>(),
    diagnostics: [] as readonly ts.Diagnostic[],
  }));

  let program: ts.Program | undefined;
  let pending = entries;
  for (let round = 0; round < 4 && pending.length > 0; round++) {
    for (const entry of pending) writeFileSync(entry.file, complete(entry.snippet.code, entry.free, exported));
    program = ts.createProgram(
      pending.map((entry) => entry.file),
      APP_COMPILER_OPTIONS,
      host,
      program,
    );
    const changed: typeof entries = [];
    for (const entry of pending) {
      entry.diagnostics = ts.getPreEmitDiagnostics(program, program.getSourceFile(entry.file));
      let added = false;
      for (const diagnostic of entry.diagnostics) {
        const name = MISSING_NAME_CODES.has(diagnostic.code) ? /'([^']+)'/.exec(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))?.[1] : undefined;
        if (name && !entry.free.has(name)) {
          entry.free.add(name);
          added = true;
        }
      }
      if (added) changed.push(entry);
    }
    pending = changed;
  }
  return entries.map(({ snippet, file, diagnostics }) => ({
    snippet,
    source: readFileSync(file, 'utf8'),
    errors: diagnostics.map((diagnostic) => {
      const { line } = diagnostic.file && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start) : { line: -1 };
      return `${line + 1}: TS${diagnostic.code} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
    }),
  }));
}

/**
 * A compiler host that parses each declaration file (`.d.ts`: the packages' types, Node's, the
 * standard library's) once and hands the same parsed file to every program made with it; the
 * snippets' own files are read afresh each time, as they change between rounds.
 */
function declarationsOnce(options: ts.CompilerOptions): ts.CompilerHost {
  const host = ts.createCompilerHost(options);
  const parsed = new Map<string, ts.SourceFile | undefined>();
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    if (!fileName.endsWith('.d.ts')) return getSourceFile(fileName, languageVersion, onError, shouldCreate);
    if (!parsed.has(fileName)) parsed.set(fileName, getSourceFile(fileName, languageVersion, onError, shouldCreate));
    return parsed.get(fileName);
  };
  return host;
}

const PARSE_OPTIONS: ts.CompilerOptions = {
  experimentalDecorators: true,
  module: ts.ModuleKind.ESNext,
  target: ts.ScriptTarget.ES2022,
  noLib: true,
  noResolve: true,
};

/**
 * Whether `code` parses as TypeScript without a syntax error: a program of that one file, asked only
 * for its syntactic diagnostics (what ts.transpileModule reports, without its emit, which made the
 * check about 10 times slower over the docs' 6,000 code spans).
 */
export function parsesAsTypeScript(code: string): boolean {
  const file = ts.createSourceFile('span.ts', code, ts.ScriptTarget.ES2022, false, ts.ScriptKind.TS);
  const host: ts.CompilerHost = {
    getSourceFile: (name) => (name === file.fileName ? file : undefined),
    getDefaultLibFileName: () => 'lib.d.ts',
    writeFile: () => undefined,
    getCurrentDirectory: () => '',
    getDirectories: () => [],
    fileExists: (name) => name === file.fileName,
    readFile: () => undefined,
    getCanonicalFileName: (name) => name,
    useCaseSensitiveFileNames: () => true,
    getNewLine: () => '\n',
  };
  return ts.createProgram([file.fileName], PARSE_OPTIONS, host).getSyntacticDiagnostics(file).length === 0;
}

interface ExportedName {
  module: string;
  typeOnly: boolean;
}

/** Every name the SNIPPET_MODULES export, as installed in appDir (first module wins). */
function exportedNames(appDir: string, host: ts.CompilerHost): Map<string, ExportedName> {
  const probe = join(appDir, 'snippet-exports-probe.ts');
  writeFileSync(probe, SNIPPET_MODULES.map((module, index) => `import * as m${index} from '${module}';\n`).join(''));
  try {
    const program = ts.createProgram([probe], APP_COMPILER_OPTIONS, host);
    const checker = program.getTypeChecker();
    const names = new Map<string, ExportedName>();
    for (const statement of program.getSourceFile(probe)!.statements) {
      if (!ts.isImportDeclaration(statement)) continue;
      const module = (statement.moduleSpecifier as ts.StringLiteral).text;
      const symbol = checker.getSymbolAtLocation(statement.moduleSpecifier);
      if (!symbol) throw new Error(`${module} is not installed in ${appDir}`);
      for (const exported of checker.getExportsOfModule(symbol)) {
        const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
        if (!names.has(exported.name)) names.set(exported.name, { module, typeOnly: (target.flags & ts.SymbolFlags.Value) === 0 });
      }
    }
    return names;
  } finally {
    rmSync(probe, { force: true });
  }
}

type Shape = 'module' | 'statements-with-this' | 'members';

/**
 * A snippet's imports of the reader's own files (`import { InventoryService } from './inventory.service'`)
 * name code the reader has and the README does not show: each name they import is declared `any`,
 * as a name the snippet uses without importing it is.
 */
function withoutRelativeImports(source: ts.SourceFile, body: string): { body: string; declarations: string[] } {
  const declarations: string[] = [];
  let result = body;
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !(statement.moduleSpecifier as ts.StringLiteral).text.startsWith('.')) continue;
    const clause = statement.importClause;
    const names = [
      ...(clause?.name ? [clause.name.text] : []),
      ...(clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements.map((element) => element.name.text) : []),
      ...(clause?.namedBindings && ts.isNamespaceImport(clause.namedBindings) ? [clause.namedBindings.name.text] : []),
    ];
    for (const name of names) declarations.push(`declare const ${name}: any;\ntype ${name} = any;`);
    result = result.replace(statement.getText(source), '');
  }
  return { body: result, declarations };
}

function complete(code: string, free: Set<string>, exported: Map<string, ExportedName>): string {
  let shape: Shape = hasSyntaxErrors(code) ? 'members' : 'module';
  let body = code;
  if (shape === 'members' && hasSyntaxErrors(`class SnippetClass {\n${body}\n}`)) {
    // Lone decorators, one per line: each is an alternative, so each decorates a method of its own.
    body = body
      .split('\n')
      .map((line, index) => (/^\s*@/.test(line) ? `${line}\nexample${index}() {}` : line))
      .join('\n');
  }
  const source = ts.createSourceFile('snippet.ts', code, ts.ScriptTarget.Latest, true);
  if (shape === 'module' && usesTopLevelThis(source)) shape = 'statements-with-this';

  const imports: string[] = [];
  let statements = body;
  if (shape === 'statements-with-this') {
    const importDeclarations = source.statements.filter(ts.isImportDeclaration);
    imports.push(...importDeclarations.map((statement) => statement.getText(source)));
    statements = source.statements
      .filter((statement) => !ts.isImportDeclaration(statement))
      .map((statement) => statement.getFullText(source))
      .join('');
  }

  const needed = new Set(free);
  if (shape !== 'module') for (const name of HOST_NAMES) if (!declaresName(source, name)) needed.add(name);
  const declarations: string[] = [];
  const byModule = new Map<string, string[]>();
  for (const name of needed) {
    const found = exported.get(name);
    if (!found) {
      declarations.push(`declare const ${name}: any;\ntype ${name} = any;`);
      continue;
    }
    byModule.set(found.module, [...(byModule.get(found.module) ?? []), found.typeOnly ? `type ${name}` : name]);
  }
  for (const [module, names] of byModule) imports.unshift(`import { ${names.join(', ')} } from '${module}';`);

  const parts = [...imports, ...declarations];
  if (shape === 'module') {
    const { body: ownBody, declarations: own } = withoutRelativeImports(source, body);
    parts.push(...own, ownBody);
    // The snippet's own classes call collaborators it does not show (this.charge, this.inventory).
    for (const statement of source.statements) {
      if (!ts.isClassDeclaration(statement) || !statement.name) continue;
      const exported = statement.modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword) ? 'export ' : '';
      parts.push(`${exported}interface ${statement.name.text} { [member: string]: any }`);
    }
  } else {
    parts.push(HOST);
    if (shape === 'members') parts.push(`class SnippetClass {\n${body}\n}\ninterface SnippetClass extends SnippetHost {}`);
    else parts.push(`async function snippet(this: SnippetHost): Promise<void> {\n${statements}\n}`);
  }
  return `${parts.join('\n')}\nexport {};\n`;
}

function hasSyntaxErrors(code: string): boolean {
  return !parsesAsTypeScript(code);
}

function usesTopLevelThis(source: ts.SourceFile): boolean {
  let found = false;
  const visit = (node: ts.Node): void => {
    if (found || ts.isClassLike(node) || ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node) || ts.isMethodDeclaration(node)) return;
    if (node.kind === ts.SyntaxKind.ThisKeyword) found = true;
    else ts.forEachChild(node, visit);
  };
  ts.forEachChild(source, visit);
  return found;
}

function declaresName(source: ts.SourceFile, name: string): boolean {
  return (
    new RegExp(`\\b${name}\\b`).test(source.text) &&
    source.statements.some((statement) => ts.isImportDeclaration(statement) && statement.getText(source).includes(name))
  );
}
