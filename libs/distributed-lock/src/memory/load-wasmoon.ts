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

/**
 * What the bridge needs of wasmoon's Emscripten module: its memory, its allocator, and the Lua C API's
 * exports called directly. wasmoon's own wrappers (`lua.lua_settop`...) go through Emscripten's
 * `ccall`, which looks the function up, checks and converts every argument on each call: ten times the
 * cost of the call itself, on a path that makes dozens of them per script. They are used once, to set
 * the VM up; every script run uses these.
 */
export interface WasmModule {
  HEAPU8: Uint8Array;
  HEAPU32: Uint32Array;
  _malloc(size: number): number;
  _free(pointer: number): void;
  lengthBytesUTF8(text: string): number;
  stringToUTF8(text: string, pointer: number, maxBytes: number): void;
  addFunction(fn: (L: number) => number, signature: string): number;
  _lua_settop(L: number, index: number): void;
  _lua_gettop(L: number): number;
  _lua_absindex(L: number, index: number): number;
  _lua_type(L: number, index: number): number;
  _lua_tolstring(L: number, index: number, length: number): number;
  _lua_tonumberx(L: number, index: number, isNumber: number): number;
  _lua_toboolean(L: number, index: number): number;
  _lua_rawgeti(L: number, index: number, n: bigint): number;
  _lua_rawseti(L: number, index: number, n: bigint): void;
  _lua_rawget(L: number, index: number): number;
  _lua_getfield(L: number, index: number, key: number): number;
  _lua_setfield(L: number, index: number, key: number): void;
  _lua_createtable(L: number, arrayItems: number, fields: number): void;
  _lua_pushlstring(L: number, text: number, length: number): number;
  _lua_pushinteger(L: number, value: bigint): void;
  _lua_pushnumber(L: number, value: number): void;
  _lua_pushboolean(L: number, value: number): void;
  _lua_pcallk(L: number, args: number, results: number, handler: number, context: number, continuation: number): number;
  _lua_error(L: number): number;
}
