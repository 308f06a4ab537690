import type { RedisClient } from '../connection/connection-strategy.js';

/** A Lua script of the library: registered once per connection, run by its SHA1 (EVALSHA). */
export interface LockScript {
  /** ioredis command name; prefixed so it cannot clash with the user's own commands. */
  readonly name: string;
  readonly numberOfKeys: number;
  readonly lua: string;
}

export type ScriptArgument = string | number;
export type ScriptCall<T> = (...args: ScriptArgument[]) => Promise<T>;

/**
 * Registers `script` on `client` with `defineCommand` (idempotent; the health check finds it there and
 * reloads it with SCRIPT LOAD after a Redis restart) and returns a function that runs it as EVALSHA,
 * keys first. A server that does not have the script yet (NOSCRIPT: new node, restart, failover)
 * gets it once as EVAL, which also caches it there.
 *
 * The call is a plain EVALSHA command rather than the method ioredis generates: that method adds a
 * promise and closures per call, and inside a pipeline it sends the whole Lua text (EVAL) every
 * time. Key prefixes and cluster slot routing apply to EVALSHA's keys as to any command's.
 */
export function bindScript<T>(client: RedisClient, script: LockScript): ScriptCall<T> {
  const commands = client as unknown as Record<string, ScriptCall<T> | undefined>;
  if (typeof commands[script.name] !== 'function') {
    client.defineCommand(script.name, { numberOfKeys: script.numberOfKeys, lua: script.lua });
  }
  const sha = (client as unknown as { scriptsSet: Record<string, { sha: string }> }).scriptsSet[script.name]!.sha;
  const redis = client as unknown as {
    evalsha(sha: string, keys: number, ...args: ScriptArgument[]): Promise<T>;
    eval(lua: string, keys: number, ...args: ScriptArgument[]): Promise<T>;
  };
  const keys = script.numberOfKeys;
  return (...args) =>
    redis.evalsha(sha, keys, ...args).catch((error: unknown) => {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(script.lua, keys, ...args);
    });
}
