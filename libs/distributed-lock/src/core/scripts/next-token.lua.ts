/**
 * Lua shared by every script that starts a new holder's lifetime: `next_token(fence_key)` returns the
 * lock's next fencing token and stores it in the counter key.
 *
 * The token is one more than the last one, and never lower than the Redis server's clock in
 * milliseconds times 1000 (plus one). The counter alone would start again at 1 when Redis loses it
 * (a restart without persistence, a failover to a replica the last writes had not reached, an
 * eviction), and a resource that has seen high tokens would then refuse every new holder. With the
 * clock as a floor, a lost or stale counter is overtaken by the first token drawn after the loss, as
 * long as the server that draws it does not read a clock behind the one that drew the last token
 * (see the README's guarantees: the bound is the time the restart or failover takes, seconds, against
 * the clock difference between servers, milliseconds with NTP). A thousand tokens per millisecond per
 * name fit under the next millisecond's floor, far more than one Redis can grant.
 *
 * Tokens stay below 2^53 (exact JavaScript numbers) until the year 2255. Redis converts Lua numbers
 * passed to `redis.call` with 17 significant digits, so storing one in a hash keeps every digit.
 */
export const NEXT_TOKEN_LUA = `
local function next_token(fence_key)
  local clock = redis.call('time')
  local floor = (tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)) * 1000
  local token = redis.call('incr', fence_key)
  if token <= floor then
    token = floor + 1
    redis.call('set', fence_key, string.format('%.0f', token))
  end
  return token
end
`;
