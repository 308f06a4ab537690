import type * as Wasmoon from 'wasmoon';

/**
 * wasmoon's Lua module (its WebAssembly instantiated), loaded on first use: the library's main entry
 * never loads wasmoon, and /testing only once a store is created.
 *
 * Jest's CommonJS mode (the default of most Nest projects) runs code in a sandbox where a dynamic
 * `import()` fails (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING_FLAG), even in a module Node's own require
 * loaded, and wasmoon's Emscripten loader does `await import('module')` on Node. There, and only there,
 * the CommonJS build compiles wasmoon's file (self-contained CommonJS) itself, letting its dynamic
 * imports use Node's default loader: the same code, run as Node would run it, in Node's main context.
 * (Node prints an ExperimentalWarning for that option, once per process.)
 */
export async function loadLuaModule(): Promise<Wasmoon.LuaWasm> {
  const wasmoon = await import('wasmoon');
  try {
    return await new wasmoon.LuaFactory().getLuaModule();
  } catch (error) {
    const missingDynamicImport = (error as { code?: unknown } | undefined)?.code === 'ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING_FLAG';
    if (!missingDynamicImport || typeof __filename !== 'string') throw error;
    const outside = requireWithDynamicImport('wasmoon', __filename) as typeof Wasmoon;
    return new outside.LuaFactory().getLuaModule();
  }
}

function requireWithDynamicImport(name: string, from: string): unknown {
  // From process, not require('node:…'): Jest hands out its own `module` builtin.
  const { createRequire } = process.getBuiltinModule('node:module');
  const vm = process.getBuiltinModule('node:vm');
  const { readFileSync } = process.getBuiltinModule('node:fs');
  const { dirname } = process.getBuiltinModule('node:path');
  const file = createRequire(from).resolve(name);
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${readFileSync(file, 'utf8')}\n})`;
  const script = new vm.Script(wrapped, { filename: file, importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
  const module = { exports: {} as unknown };
  (script.runInThisContext() as (...args: unknown[]) => void).call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
  return module.exports;
}
