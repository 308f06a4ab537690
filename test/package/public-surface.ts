import { relative } from 'node:path';
import ts from 'typescript';

/**
 * Declarations of the package that its entry points do not export, but that its public declarations
 * may name: each says why it is no internal type. Their own members are walked as the exported ones
 * are, so an internal type they name is still found.
 */
export const NAMED_BUT_NOT_EXPORTED: Record<string, string> = {
  // Bases of exported classes and interfaces: what users see of them is inherited by exported names.
  ExclusiveHashLock: 'the base of ReentrantLock and FairLock',
  ReadWriteHalf: 'the base of ReadLock and WriteLock',
  LockEventBase: 'the fields every lock event has',
  CommonLockOptions: 'the options DistributedLockOptions and DistributedLockArgsOptions share',
  CommonSemaphoreOptions: 'the options both semaphore decorator forms share',
  // What Nest's ConfigurableModuleBuilder makes: `forRoot(options: typeof OPTIONS_TYPE)` is its pattern.
  ConfigurableDistributedLockModule: "DistributedLockModule's ConfigurableModuleBuilder class",
  DISTRIBUTED_LOCK_OPTIONS_TYPE: "ConfigurableModuleBuilder's options type",
  DISTRIBUTED_LOCK_ASYNC_OPTIONS_TYPE: "ConfigurableModuleBuilder's async options type",
  ConfigurableBoardModule: "the board module's ConfigurableModuleBuilder class",
  BOARD_OPTIONS_TYPE: "ConfigurableModuleBuilder's options type",
  BOARD_ASYNC_OPTIONS_TYPE: "ConfigurableModuleBuilder's async options type",
  // Unions and shapes made of public or plain types.
  LockStoreClient: 'the union of the exported client types (LockClientOptions.client)',
  StoreWithOwnPort: "a store with a port of its own (the in-memory store); the port's type is opaque",
  BackendErrorCode: 'the three codes of LockBackendError, members of DistributedLockErrorCode',
  REDIS_MODES: "the list RedisMode is made from ('single' | 'cluster' | ...)",
  MeterLike: "the part of OpenTelemetry's Meter the metrics use (MeterProviderLike.getMeter)",
  CounterLike: "the part of OpenTelemetry's Counter the metrics use (MeterLike)",
  HistogramLike: "the part of OpenTelemetry's Histogram the metrics use (MeterLike)",
  ObservableGaugeLike: "the part of OpenTelemetry's ObservableGauge the metrics use (MeterLike)",
  InstrumentOptions: "OpenTelemetry's instrument options as the metrics give them (MeterLike)",
  MetricAttributes: "OpenTelemetry's attributes of a measurement (CounterLike, HistogramLike)",
  ObservableResultLike: "the part of OpenTelemetry's ObservableResult a gauge callback uses",
  Status: "the in-memory store's ioredis-like connection status ('wait' | 'ready' | 'end')",
  RegisteredScript: "what the in-memory store's ioredis-like scriptsSet holds (lua, sha, numberOfKeys)",
};

/**
 * The types that the public declarations of `program` name (in exported classes' and interfaces'
 * non-private members, heritage clauses, type aliases and functions) but that no entry point exports
 * and NAMED_BUT_NOT_EXPORTED does not list, each with where it is named. A member marked @internal
 * is not in the declarations, so it names nothing; a reference to a declaration that stripInternal
 * removed shows as `<unresolved>`.
 */
export function internalTypesNamed(program: ts.Program, entries: string[], packageDir: string): Map<string, string[]> {
  const checker = program.getTypeChecker();
  const resolve = (symbol: ts.Symbol): ts.Symbol => (symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol);
  const inPackage = (node: ts.Node): boolean => node.getSourceFile().fileName.startsWith(packageDir);
  const where = (node: ts.Node): string => {
    const file = node.getSourceFile();
    return `${relative(packageDir, file.fileName)}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  };
  const exported = new Set<ts.Symbol>();
  for (const entry of entries) {
    for (const symbol of checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(entry)!)!)) exported.add(resolve(symbol));
  }
  const found = new Map<string, string[]>();
  const walked = new Set<ts.Node>();

  const nameOf = (node: ts.Node): ts.Node | undefined => {
    if (ts.isTypeReferenceNode(node)) return node.typeName;
    if (ts.isExpressionWithTypeArguments(node)) return node.expression;
    if (ts.isTypeQueryNode(node)) return node.exprName;
    if (ts.isImportTypeNode(node)) return node.qualifier ?? node;
    return undefined;
  };
  const visit = (node: ts.Node, owner: string): void => {
    const name = nameOf(node);
    if (name) {
      const symbol = checker.getSymbolAtLocation(name);
      const declaration = symbol && resolve(symbol).declarations?.[0];
      if (!declaration) {
        found.set(`<unresolved> ${node.getText()}`, [...(found.get(`<unresolved> ${node.getText()}`) ?? []), `${owner} (${where(node)})`]);
      } else if (inPackage(declaration) && !exported.has(resolve(symbol)) && !(resolve(symbol).flags & ts.SymbolFlags.TypeParameter)) {
        const internal = resolve(symbol).name;
        if (internal in NAMED_BUT_NOT_EXPORTED) walk(declaration, internal);
        else found.set(internal, [...(found.get(internal) ?? []), `${owner} (${where(node)})`]);
      }
    }
    ts.forEachChild(node, (child) => visit(child, owner));
  };
  const walk = (declaration: ts.Node, label: string): void => {
    if (walked.has(declaration)) return;
    walked.add(declaration);
    if (!ts.isClassDeclaration(declaration) && !ts.isInterfaceDeclaration(declaration)) return visit(declaration, label);
    for (const clause of declaration.heritageClauses ?? []) visit(clause, label);
    for (const parameter of declaration.typeParameters ?? []) visit(parameter, label);
    for (const member of declaration.members) {
      const hidden = ts.getCombinedModifierFlags(member as ts.Declaration) & ts.ModifierFlags.Private || (member.name && ts.isPrivateIdentifier(member.name));
      if (!hidden) visit(member, `${label}.${ts.isConstructorDeclaration(member) ? 'constructor' : (member.name?.getText() ?? '[index]')}`);
    }
  };
  for (const symbol of exported) for (const declaration of symbol.declarations ?? []) if (inPackage(declaration)) walk(declaration, symbol.name);
  return found;
}
