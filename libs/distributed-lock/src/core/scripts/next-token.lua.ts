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
 *
 * The same floor makes the counters safe to expire, and they do, so the names a service stops using
 * do not stay in Redis forever (about 100 bytes each). Every draw stores the token with an expiry of
 * FENCE_COUNTER_TTL_MS plus however many milliseconds the token runs ahead of the floor: when the counter expires,
 * the server's clock floor has passed the last token by an hour, and the next token, drawn from the
 * floor, is higher. This needs the server's clock not to go back by an hour meanwhile.
 */
export const FENCE_COUNTER_TTL_MS = 3_600_000;

/** `clock_floor()`: the server's clock in milliseconds times 1000. `keep_token(key, token, floor)`: store it, expiring as above. */
export const KEEP_TOKEN_LUA = `
local function clock_floor()
  local clock = redis.call('time')
  return (tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)) * 1000
end

local function keep_token(fence_key, token, floor)
  local ahead = math.ceil((token - floor) / 1000)
  if ahead < 0 then ahead = 0 end
  redis.call('set', fence_key, string.format('%.0f', token), 'PX', string.format('%.0f', ${FENCE_COUNTER_TTL_MS} + ahead))
end
`;

export const NEXT_TOKEN_LUA = `${KEEP_TOKEN_LUA}
local function next_token(fence_key)
  local floor = clock_floor()
  local token = tonumber(redis.call('get', fence_key) or '0') + 1
  if token <= floor then
    token = floor + 1
  end
  keep_token(fence_key, token, floor)
  return token
end
`;
