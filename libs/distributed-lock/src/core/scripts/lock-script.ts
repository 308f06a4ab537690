import type { RedisClient } from '../connection/connection-strategy.js';

/** A Lua script the library registers once per connection with ioredis `defineCommand` (EVALSHA + NOSCRIPT fallback). */
export interface LockScript {
  /** ioredis command name; prefixed so it cannot clash with the user's own commands. */
  readonly name: string;
  readonly numberOfKeys: number;
  readonly lua: string;
}

export type ScriptArgument = string | number;
export type ScriptCall<T> = (...args: ScriptArgument[]) => Promise<T>;

/**
 * Defines `script` on `client` (idempotent) and returns a bound function that runs it. The keys come
 * first in the argument list, as ioredis expects.
 */
export function bindScript<T>(client: RedisClient, script: LockScript): ScriptCall<T> {
  const commands = client as unknown as Record<string, ScriptCall<T> | undefined>;
  if (typeof commands[script.name] !== 'function') {
    client.defineCommand(script.name, { numberOfKeys: script.numberOfKeys, lua: script.lua });
  }
  return commands[script.name]!.bind(client);
}
