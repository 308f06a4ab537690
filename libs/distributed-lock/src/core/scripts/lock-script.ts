import { createHash } from 'node:crypto';

export type ScriptArgument = string | number;

/**
 * One of the library's Lua scripts: its text, its SHA1 (computed here, for EVALSHA), and how a typed
 * arguments object becomes its KEYS and ARGV. `R` is the reply's type. Run with LockNode.run.
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
