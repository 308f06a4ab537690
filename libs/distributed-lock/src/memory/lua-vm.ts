import { createHash } from 'node:crypto';
import type { LuaWasm } from 'wasmoon';
import { loadLuaModule, type WasmModule } from './load-wasmoon.js';
import { LUA_SANDBOX } from './lua-sandbox.lua.js';
import type { MemoryKeyspace } from './memory-keyspace.js';
import { formatDouble } from './redis-number.js';
import { runScriptCommand, StatusReply, type Reply } from './script-commands.js';
import type { ScriptKeyAudit } from './strict-keys.js';

/*
 * The Lua VM of the in-memory store: the library's Lua scripts (any script, in fact) run here as they
 * are, on the store's keyspace, instead of JavaScript twins of them.
 *
 * Why wasmoon (PUC Lua 5.4 compiled to WebAssembly) and not fengari (Lua 5.3 in JavaScript, the VM of
 * ioredis-mock): fengari's integers are 32 bits. `tonumber('1750000000') * 1000`, the first line of
 * every script that reads the server's clock, wraps around to 1948310528 there, so `now`, the waiting
 * queues' deadlines and the fencing tokens' clock floor would be garbage; working around it would
 * mean rewriting the VM's number semantics in the bridge. wasmoon's integers are 64 bits and its
 * number formatting is C's, so Lua arithmetic on the library's numbers (milliseconds around 1.8e12,
 * tokens around 1.8e15) is exact, as it is with Redis' doubles. Both run a script of three
 * redis.calls in about 10 us. wasmoon loads its WebAssembly asynchronously, once per process (~15 ms;
 * see load-wasmoon.ts); from then on a script runs synchronously, redis.call included, so nothing
 * interleaves with it: the store holds its commands back, in order, until the VM is there
 * (`whenLuaLoaded`).
 *
 * One Lua state serves every store of the process: a script keeps no state between runs (globals are
 * read-only, as in Redis 7), and `redis.call` reaches the keyspace of the run in progress.
 *
 * The bridge converts as Redis 7.0 does (script_lua.c):
 * - arguments of redis.call: a string as it is, a number with `%.17g`, anything else an error;
 * - replies to Lua: integer -> number, bulk -> string, nil -> false, array -> table, status ->
 *   {ok = ...}; an error reply raises {err = ...} (redis.pcall returns it);
 * - the script's result: number -> integer (truncated), string -> bulk, true -> 1, false / nil -> nil,
 *   {err = ...} -> error reply, {ok = ...} -> status, other table -> array up to its first nil.
 * Lua 5.4 against Redis' 5.1: integer replies are Lua integers here (exact, and written without a
 * decimal point, as 5.1 writes a whole double below 1e14); `tostring` is 5.1's (lua-sandbox.lua.ts).
 * What stays 5.4: `..` writes an integral float as `5.0` and an integer above 1e14 in full (5.1:
 * `5`, `1.75e+15`), `string.format('%d', 2.5)` is an error (5.1 truncates), and `//` and bitwise
 * operators compile (a syntax error in Redis). The library's scripts use none of these.
 */

/** Lua 5.4's C API constants (lua.h, luaconf.h), as wasmoon's build has them. */
const LUA_REGISTRYINDEX = -1_000_000 - 1000;
const LuaType = { Nil: 0, Boolean: 1, Number: 3, String: 4, Table: 5 } as const;

/** The field names the bridge reads and writes, as C strings in WebAssembly memory (written once). */
type FieldName = 'KEYS' | 'ARGV' | 'err' | 'ok' | 'line';

const utf8 = new TextDecoder();
const utf8Encoder = new TextEncoder();

/** A Lua error reply's text as Redis 7.0 words it. */
function scriptError(message: string, sha: string, line: number): Error {
  return new Error(line > 0 ? `${message} script: ${sha}, on @user_script:${line}.` : `${message} script: ${sha}.`);
}

/** A reply as ioredis hands it over: a status as its text (`'OK'`), an error inside an array as an Error. */
function asClientReply(reply: Reply): Reply {
  if (reply instanceof StatusReply) return reply.status;
  return Array.isArray(reply) ? reply.map(asClientReply) : reply;
}

export class LuaVm {
  private readonly module: WasmModule;
  private readonly L: number;
  /** Registry references: the globals table, the environment, the error handler. */
  private readonly globalsRef: number;
  private readonly envRef: number;
  private readonly onErrorRef: number;
  /** A scratch word for lua_tolstring's length. */
  private readonly lengthPointer: number;
  /** A scratch buffer in WebAssembly memory for strings pushed to Lua (grown when a string needs it). */
  private scratch: { address: number; size: number; view: Uint8Array } = { address: 0, size: 0, view: new Uint8Array(0) };
  private readonly fields = new Map<FieldName, number>();
  /** Compiled scripts by SHA1 (registry references to their functions). */
  private readonly compiled = new Map<string, number>();
  /** The keyspace of the script running now (redis.call's target). */
  private keyspace: MemoryKeyspace | undefined;
  /** Under strict keys, the check of the script running now (see strict-keys.ts). */
  private audit: ScriptKeyAudit | undefined;

  constructor(private readonly lua: LuaWasm) {
    this.module = lua.module as unknown as WasmModule;
    this.L = lua.luaL_newstate();
    lua.luaL_openlibs(this.L);
    this.lengthPointer = this.module._malloc(4);
    const L = this.L;
    if (lua.luaL_loadbufferx(L, LUA_SANDBOX, this.module.lengthBytesUTF8(LUA_SANDBOX), '=sandbox', 't') !== 0) {
      throw new Error(`the in-memory store's Lua sandbox does not compile: ${this.toText(L, -1)}`);
    }
    lua.lua_pushcclosure(
      L,
      this.module.addFunction((state) => this.redisCall(state, true), 'ii'),
      0,
    );
    lua.lua_pushcclosure(
      L,
      this.module.addFunction((state) => this.redisCall(state, false), 'ii'),
      0,
    );
    lua.lua_pushcclosure(
      L,
      this.module.addFunction((state) => this.sha1hex(state), 'ii'),
      0,
    );
    if (lua.lua_pcallk(L, 3, 3, 0, 0, null) !== 0) throw new Error(`the in-memory store's Lua sandbox fails: ${this.toText(L, -1)}`);
    this.onErrorRef = lua.luaL_ref(L, LUA_REGISTRYINDEX);
    this.envRef = lua.luaL_ref(L, LUA_REGISTRYINDEX);
    this.globalsRef = lua.luaL_ref(L, LUA_REGISTRYINDEX);
    for (const name of ['KEYS', 'ARGV', 'err', 'ok', 'line'] as const) this.fields.set(name, this.pushBytes(name).address);
  }

  private field(name: FieldName): number {
    return this.fields.get(name)!;
  }

  /** The SHA1 Redis names a script by. */
  static sha1(script: string): string {
    return createHash('sha1').update(script).digest('hex');
  }

  /** Compiles `script` (once per process) and returns its SHA1; a syntax error throws Redis' error. */
  compile(script: string, sha = LuaVm.sha1(script)): string {
    if (this.compiled.has(sha)) return sha;
    const { lua, L } = this;
    const pointer = this.pushBytes(script);
    const status = lua.luaL_loadbufferx(L, pointer.address, pointer.length, '@user_script', 't');
    this.module._free(pointer.address);
    if (status !== 0) {
      const message = this.toText(L, -1);
      lua.lua_settop(L, 0);
      throw new Error(`ERR Error compiling script (new function): ${message}`);
    }
    lua.lua_rawgeti(L, LUA_REGISTRYINDEX, BigInt(this.envRef));
    lua.lua_setupvalue(L, -2, 1); // the chunk's _ENV: the read-only environment
    this.compiled.set(sha, lua.luaL_ref(L, LUA_REGISTRYINDEX));
    return sha;
  }

  /**
   * Runs a compiled script on `keyspace`, synchronously, and returns its reply converted as Redis
   * converts it (a status as its text, an error reply thrown as an Error). `audit`: strict keys'
   * check, shown every command's keys.
   */
  run(keyspace: MemoryKeyspace, sha: string, keys: string[], argv: string[], audit?: ScriptKeyAudit): Reply {
    const ref = this.compiled.get(sha);
    if (ref === undefined) throw new Error('NOSCRIPT No matching script. Please use EVAL.');
    const { module: m, L } = this;
    m._lua_settop(L, 0);
    m._lua_rawgeti(L, LUA_REGISTRYINDEX, BigInt(this.globalsRef));
    this.pushStrings(L, keys);
    m._lua_setfield(L, -2, this.field('KEYS'));
    this.pushStrings(L, argv);
    m._lua_setfield(L, -2, this.field('ARGV'));
    m._lua_settop(L, 0);
    m._lua_rawgeti(L, LUA_REGISTRYINDEX, BigInt(this.onErrorRef));
    m._lua_rawgeti(L, LUA_REGISTRYINDEX, BigInt(ref));
    this.keyspace = keyspace;
    this.audit = audit;
    try {
      if (m._lua_pcallk(L, 0, 1, 1, 0, 0) !== 0) {
        if (m._lua_type(L, -1) !== LuaType.Table) throw scriptError(`ERR ${this.toText(L, -1)}`, sha, -1); // the handler failed
        m._lua_getfield(L, -1, this.field('err'));
        const message = this.toText(L, -1);
        m._lua_getfield(L, -2, this.field('line'));
        throw scriptError(message, sha, Number(m._lua_tonumberx(L, -1, 0)));
      }
      const reply = this.toReply(L, -1);
      if (reply instanceof Error) throw reply;
      return asClientReply(reply);
    } finally {
      this.keyspace = undefined;
      this.audit = undefined;
      m._lua_settop(L, 0);
    }
  }

  // --- Lua -> JavaScript ------------------------------------------------------------------------

  /** The bytes of the string at `index` (a number is converted in place, as lua_tolstring does). */
  private toText(L: number, index: number): string {
    const address = this.module._lua_tolstring(L, index, this.lengthPointer);
    if (address === 0) return '';
    const length = this.module.HEAPU32[this.lengthPointer >>> 2]!;
    return utf8.decode(this.module.HEAPU8.subarray(address, address + length));
  }

  /** The script's result as a Redis reply (luaReplyToRedisReply). */
  private toReply(L: number, index: number): Reply {
    const m = this.module;
    const at = m._lua_absindex(L, index);
    switch (m._lua_type(L, at)) {
      case LuaType.Number:
        return Math.trunc(m._lua_tonumberx(L, at, 0));
      case LuaType.String:
        return this.toText(L, at);
      case LuaType.Boolean:
        return m._lua_toboolean(L, at) ? 1 : null;
      case LuaType.Table: {
        const err = this.rawField(L, at, 'err');
        if (err !== undefined) return new Error(err);
        const ok = this.rawField(L, at, 'ok');
        if (ok !== undefined) return new StatusReply(ok);
        const items: Reply[] = [];
        for (let i = 1; ; i++) {
          if (m._lua_rawgeti(L, at, BigInt(i)) === LuaType.Nil) {
            m._lua_settop(L, -2);
            return items;
          }
          items.push(this.toReply(L, -1));
          m._lua_settop(L, -2);
        }
      }
      default:
        return null;
    }
  }

  /** A table's string field (raw), or undefined. */
  private rawField(L: number, table: number, name: FieldName): string | undefined {
    const m = this.module;
    this.pushString(L, name);
    const type = m._lua_rawget(L, table);
    const value = type === LuaType.String ? this.toText(L, -1) : undefined;
    m._lua_settop(L, -2);
    return value;
  }

  // --- JavaScript -> Lua ------------------------------------------------------------------------

  /** `text` as UTF-8 in WebAssembly memory (any length, zero bytes included); the caller frees it. */
  private pushBytes(text: string): { address: number; length: number } {
    const length = this.module.lengthBytesUTF8(text);
    const address = this.module._malloc(length + 1);
    this.module.stringToUTF8(text, address, length + 1);
    return { address, length };
  }

  /** Pushes `text` (UTF-8, through the scratch buffer: Lua copies it). */
  private pushString(L: number, text: string): void {
    const m = this.module;
    const most = text.length * 3;
    let { view } = this.scratch;
    if (most > this.scratch.size || view.buffer !== m.HEAPU8.buffer) {
      if (most > this.scratch.size) {
        if (this.scratch.address) m._free(this.scratch.address);
        const size = Math.max(256, most * 2);
        this.scratch = { address: m._malloc(size), size, view };
      }
      // (Re)made after an allocation: memory may have grown, which detaches the old view.
      view = this.scratch.view = new Uint8Array(m.HEAPU8.buffer, this.scratch.address, this.scratch.size);
    }
    let length = 0;
    for (; length < text.length; length++) {
      const code = text.charCodeAt(length);
      if (code > 127) break;
      view[length] = code;
    }
    if (length < text.length) length = utf8Encoder.encodeInto(text, view).written;
    m._lua_pushlstring(L, this.scratch.address, length);
  }

  private pushStrings(L: number, items: string[]): void {
    const m = this.module;
    m._lua_createtable(L, items.length, 0);
    for (let i = 0; i < items.length; i++) {
      this.pushString(L, items[i]!);
      m._lua_rawseti(L, -2, BigInt(i + 1));
    }
  }

  /** A command's reply as Lua sees it (redisProtocolToLuaType). */
  private pushReply(L: number, reply: Reply): void {
    const m = this.module;
    if (reply === null) m._lua_pushboolean(L, 0);
    else if (typeof reply === 'number') {
      if (Number.isSafeInteger(reply)) m._lua_pushinteger(L, BigInt(reply));
      else m._lua_pushnumber(L, reply);
    } else if (typeof reply === 'string') this.pushString(L, reply);
    else if (reply instanceof StatusReply || reply instanceof Error) {
      m._lua_createtable(L, 0, 1);
      this.pushString(L, reply instanceof StatusReply ? reply.status : reply.message);
      m._lua_setfield(L, -2, this.field(reply instanceof StatusReply ? 'ok' : 'err'));
    } else {
      m._lua_createtable(L, reply.length, 0);
      for (let i = 0; i < reply.length; i++) {
        this.pushReply(L, reply[i]!);
        m._lua_rawseti(L, -2, BigInt(i + 1));
      }
    }
  }

  // --- functions Lua calls ------------------------------------------------------------------------

  /**
   * redis.call (`raise`) and redis.pcall: runs the command on the keyspace of the run in progress. An
   * error reply is raised as `{err = message}` (lua_error unwinds through this function, as wasmoon's
   * own bindings do), or returned by pcall. No JavaScript exception ever leaves this function.
   */
  private redisCall(L: number, raise: boolean): number {
    const m = this.module;
    let reply: Reply;
    try {
      const count = m._lua_gettop(L);
      if (count === 0) throw new Error('ERR Please specify at least one argument for this redis lib call');
      const words: string[] = [];
      for (let i = 1; i <= count; i++) {
        const type = m._lua_type(L, i);
        if (type === LuaType.Number) words.push(formatDouble(m._lua_tonumberx(L, i, 0)));
        else if (type === LuaType.String) words.push(this.toText(L, i));
        else throw new Error('ERR Lua redis lib command arguments must be strings or integers');
      }
      if (!this.keyspace) throw new Error('ERR redis.call outside a script run');
      reply = runScriptCommand(this.keyspace, words, this.audit);
    } catch (error) {
      reply = error instanceof Error ? error : new Error(String(error));
    }
    m._lua_settop(L, 0);
    this.pushReply(L, reply);
    if (reply instanceof Error && raise) return m._lua_error(L);
    return 1;
  }

  private sha1hex(L: number): number {
    const text = this.module._lua_type(L, 1) === LuaType.String ? this.toText(L, 1) : '';
    this.pushString(L, LuaVm.sha1(text));
    return 1;
  }
}

// --- one VM per process, loaded on first use ------------------------------------------------------

let vm: LuaVm | undefined;
let loading: Promise<void> | undefined;
let failure: Error | undefined;
/** Commands that came before the VM, in the order they came. */
const waiting: (() => void)[] = [];

function startLoading(): void {
  loading ??= loadLuaModule().then(
    (lua) => {
      vm = new LuaVm(lua);
      for (const task of waiting.splice(0)) task();
    },
    (error: unknown) => {
      failure = new Error(`nestjs-distributed-lock/testing could not load its Lua VM (wasmoon): ${error instanceof Error ? error.message : String(error)}`);
      for (const task of waiting.splice(0)) task();
    },
  );
}

/** Starts loading the VM (the first InMemoryLockStore of the process does), so that it is there sooner. */
export function preloadLuaVm(): void {
  startLoading();
}

function settle<T>(task: (vm: LuaVm) => T, resolve: (value: T) => void, reject: (error: Error) => void): void {
  if (!vm) return reject(failure!);
  try {
    resolve(task(vm));
  } catch (error) {
    reject(error instanceof Error ? error : new Error(String(error)));
  }
}

/**
 * Runs `task` with the VM now if it is loaded and no earlier command waits for it, else once it is
 * loaded, after the commands that came before: a store's commands apply in the order they are sent.
 * The result (or error) is delivered asynchronously either way, as a reply from a socket would be.
 */
export function whenLuaLoaded<T>(task: (vm: LuaVm) => T): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if ((vm || failure) && waiting.length === 0) return settle(task, resolve, reject);
    waiting.push(() => settle(task, resolve, reject));
    startLoading();
  });
}
