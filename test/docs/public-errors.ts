import { join } from 'node:path';
import ts from 'typescript';
import { ROOT } from '../package/packed-library.js';

/** An error class the package exports, and the class it extends. */
export interface PublicErrorClass {
  name: string;
  /** The class it extends directly (`DistributedLockError` for most). */
  base: string;
  abstract: boolean;
}

export interface PublicErrors {
  /** Every member of the exported `DistributedLockErrorCode` union. */
  codes: string[];
  /** Every exported class that extends `DistributedLockError`, the base class itself included. */
  classes: PublicErrorClass[];
}

const ENTRY = join(ROOT, 'libs/distributed-lock/src/index.ts');
const ROOT_ERROR = 'DistributedLockError';

/**
 * The error codes and classes of the package's main entry point, read with the TypeScript checker
 * from what `src/index.ts` exports (so a code or a class added anywhere under it is found).
 */
export function publicErrors(): PublicErrors {
  const program = ts.createProgram([ENTRY], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    experimentalDecorators: true,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const entry = checker.getSymbolAtLocation(program.getSourceFile(ENTRY)!)!;
  const exports = checker.getExportsOfModule(entry).map((symbol) => (symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol));

  const codeType = exports.find((symbol) => symbol.name === 'DistributedLockErrorCode');
  if (!codeType) throw new Error('the main entry point no longer exports DistributedLockErrorCode');
  const union = checker.getDeclaredTypeOfSymbol(codeType);
  const codes = (union.isUnion() ? union.types : [union]).map((type) => (type as ts.StringLiteralType).value);

  const classes: PublicErrorClass[] = [];
  for (const symbol of exports) {
    const declaration = symbol.declarations?.find(ts.isClassDeclaration);
    if (!declaration) continue;
    const chain = baseChain(checker, checker.getDeclaredTypeOfSymbol(symbol) as ts.InterfaceType);
    if (symbol.name !== ROOT_ERROR && !chain.includes(ROOT_ERROR)) continue;
    const abstract = ts.getCombinedModifierFlags(declaration) & ts.ModifierFlags.Abstract;
    classes.push({ name: symbol.name, base: chain[0] ?? '', abstract: abstract !== 0 });
  }
  return { codes, classes };
}

/** The names of the classes `type` extends, nearest first. */
function baseChain(checker: ts.TypeChecker, type: ts.InterfaceType): string[] {
  const names: string[] = [];
  let current: ts.BaseType | undefined = checker.getBaseTypes(type)[0];
  while (current) {
    const name = current.getSymbol()?.name;
    if (!name) break;
    names.push(name);
    current = current.isClassOrInterface() ? checker.getBaseTypes(current)[0] : undefined;
  }
  return names;
}
