import { luaHelper } from './lua-helper.js';

/**
 * `now_ms()`: the Redis server's clock in milliseconds, read once per script run (a batch of operations
 * shares one reading): TIME costs more than most commands a script calls.
 */
export const CLOCK_LUA = luaHelper(
  'clock',
  `
local clock_now_ms = nil
local function now_ms()
  if not clock_now_ms then
    local clock = redis.call('time')
    clock_now_ms = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
  end
  return clock_now_ms
end
`,
);

/**
 * Lua shared by every script that starts a new holder's lifetime: `next_token(fence_key)` returns the
 * next fencing token and stores it in the counter key.
 *
 * The counter is shared (see LockKeys.fence): by every lock name of one cluster slot in a cluster, by
 * every lock name of the deployment otherwise. A bounded number of keys (one, or at most one per slot)
 * that never expire, however many names come and go, and a token that increases for every name that
 * shares the counter increases for each of them. The token is one more than the last one (INCR: one
 * call when several tokens are drawn in one millisecond), and never lower than the Redis server's clock
 * in milliseconds times 1000 (plus one). The
 * counter alone would start again at 1 when Redis loses it (a restart without persistence, a failover
 * to a replica the last writes had not reached), and a resource that has seen high tokens would then
 * refuse every new holder. With the clock as a floor, a lost or stale counter is overtaken by the first
 * token drawn after the loss, as long as the server that draws it does not read a clock behind the one
 * that drew the last token (see the guarantees: the bound is the time the restart or failover takes,
 * seconds, against the clock difference between servers, milliseconds with NTP). A thousand tokens per
 * millisecond per slot fit under the next millisecond's floor, far more than one Redis can grant.
 *
 * Tokens stay below 2^53 (exact JavaScript numbers) until the year 2255. Redis converts Lua numbers
 * passed to `redis.call` with 17 significant digits, so storing one keeps every digit.
 */
export const NEXT_TOKEN_LUA = luaHelper(
  'next_token',
  `
local function next_token(fence_key)
  local floor = now_ms() * 1000
  local token = redis.call('incr', fence_key)
  if token <= floor then
    token = floor + 1
    redis.call('set', fence_key, token)
  end
  return token
end
`,
  [CLOCK_LUA],
);
