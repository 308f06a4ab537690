import { defineLockScript } from '../scripts/lock-script.js';

/** The commands a fenced call may run on the protected resource's keys. */
export type FencedCommand = 'get' | 'set' | 'incrby' | 'hset' | 'del' | 'rpush';

export interface FencedOpsArgs {
  /** Where the resource keeps the highest token it has seen. */
  readonly fence: string;
  /** The data keys the operations name (by position, from 1). */
  readonly keys: readonly string[];
  /** The caller's fencing token: a positive integer in decimal, no leading zero. */
  readonly token: string;
  /** Each operation: command, key position, argument count, arguments. */
  readonly ops: readonly (string | number)[];
}

/** {1, [each operation's reply]} when the token was accepted; {0, highest token seen} when refused. */
export type FencedOpsReply = [1, unknown[]] | [0, string];

/**
 * Runs a batch of commands on a protected resource in Redis, fenced by a lock's token, as one step:
 * refused, with nothing changed, when the resource has seen a higher token; otherwise the token is
 * recorded as the highest seen (reads record it too, so that a holder that read before a newer holder
 * cannot write afterwards: read, read, write, write would otherwise interleave) and the commands run.
 * An equal token is the same holder: accepted. Tokens are compared as decimal strings (length, then
 * digits), never as Lua numbers, and stored as given. Every key must be in one cluster slot: the
 * caller puts the lock name's hash tag in them (see FencedResource.forLock).
 */
export const fencedOps = defineLockScript<FencedOpsArgs, FencedOpsReply>({
  name: 'dlockFencedOps',
  keys: (a) => [a.fence, ...a.keys],
  argv: (a) => [a.token, ...a.ops],
  lua: `
local fence_key = KEYS[1]
local token = ARGV[1]

local function is_lower(a, b)
  if #a ~= #b then
    return #a < #b
  end
  return a < b
end

local function apply(command, key, args)
  if command == 'get' then
    return redis.call('get', key)
  elseif command == 'set' or command == 'hset' or command == 'rpush' then
    return redis.call(command, key, unpack(args))
  elseif command == 'incrby' then
    return redis.call('incrby', key, args[1])
  elseif command == 'del' then
    return redis.call('del', key)
  end
  return redis.error_reply('unknown fenced command ' .. command)
end

local seen = redis.call('get', fence_key)
if seen and is_lower(token, seen) then
  return {0, seen}
end
if not seen or is_lower(seen, token) then
  redis.call('set', fence_key, token)
end
local replies = {}
local i = 2
while i <= #ARGV do
  local command, key, count = ARGV[i], KEYS[tonumber(ARGV[i + 1]) + 1], tonumber(ARGV[i + 2])
  local args = {}
  for j = 1, count do
    args[j] = ARGV[i + 2 + j]
  end
  replies[#replies + 1] = apply(command, key, args)
  i = i + 3 + count
end
return {1, replies}
`,
});
