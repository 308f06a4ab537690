import { createHash } from 'node:crypto';

export type ScriptArgument = string | number;

/**
 * One of the library's Lua scripts: its text, its SHA1 (computed here, for EVALSHA), and how a typed
 * arguments object becomes its KEYS and ARGV. `R` is the reply's type. Run with LockNode.run.
 *
 * On the lock path, write each call's arguments as a literal of named fields (or pass a prebuilt keys
 * object as one field, as the semaphore does); never spread a lock's keys object into them. V8 built
 * those spread objects slowly: the read lock and the semaphore spent about 40 % of their client CPU per
 * acquire + release on it (100 parallel callers: 89-96 us against 52-56 us per cycle, medians).
 */
export interface LockScript<A, R> {
  /** For registration with ioredis (defineCommand) and error messages; prefixed to avoid clashes. */
  readonly name: string;
  readonly lua: string;
  readonly sha: string;
  keys(args: A): string[];
  argv(args: A): ScriptArgument[];
  /** Type only: what the script replies. */
  readonly reply?: R;
}

/** Defines a script: KEYS and ARGV from a named-arguments object, and the SHA1 of its text. */
export function defineLockScript<A, R>(definition: {
  name: string;
  lua: string;
  keys: (args: A) => string[];
  argv: (args: A) => ScriptArgument[];
}): LockScript<A, R> {
  return { ...definition, sha: createHash('sha1').update(definition.lua).digest('hex') };
}

/** A lock script whose arguments and reply types are not known here (lists, registration). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyLockScript = LockScript<any, unknown>;
