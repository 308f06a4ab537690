import type { LockScript } from './lock-script.js';
import { NEXT_TOKEN_LUA } from './next-token.lua.js';

/** Lua: `now` in ms by the server's clock, and removal of queued waiters whose entry was not refreshed in time. */
export const FAIR_QUEUE_PRELUDE = `
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local dead = redis.call('zrangebyscore', KEYS[4], '-inf', now)
for _, waiter in ipairs(dead) do
  redis.call('zrem', KEYS[3], waiter)
  redis.call('zrem', KEYS[4], waiter)
end
`;

/**
 * Takes or re-enters a fair lock: granted only to its owner (reentrant) or, when free, to the first
 * live waiter in the queue (or to anyone when nobody queues).
 * KEYS[1] lock hash {owner, holds, token}; KEYS[2] fencing counter; KEYS[3] queue (sorted set, score =
 * arrival ticket); KEYS[4] queue deadlines (sorted set, score = server time in ms after which the
 * entry counts as dead). All in one slot through the `{name}` hash tag.
 * ARGV[1] owner; ARGV[2] lease ms; ARGV[3] queue entry timeout ms; ARGV[4] '1' to queue on failure.
 * Returns {token, holds} when acquired, else {0, ms until something can change}: the holder's lease,
 * or, when the lock is free but another waiter is first, the time until that waiter's entry expires.
 * A waiter that fails keeps (or takes) its place and refreshes its entry's deadline; waiters that
 * stopped refreshing (crashed, or gave up without a word) are dropped by every call, so a dead waiter
 * blocks the ones behind it for at most one entry timeout.
 */
export const FAIR_ACQUIRE_SCRIPT: LockScript = {
  name: 'dlockFairAcquire',
  numberOfKeys: 4,
  lua: `${FAIR_QUEUE_PRELUDE}${NEXT_TOKEN_LUA}
local owner = redis.call('hget', KEYS[1], 'owner')
if owner == ARGV[1] then
  local holds = redis.call('hincrby', KEYS[1], 'holds', 1)
  if redis.call('pttl', KEYS[1]) < tonumber(ARGV[2]) then
    redis.call('pexpire', KEYS[1], ARGV[2])
  end
  return {tonumber(redis.call('hget', KEYS[1], 'token')), holds}
end
local first = redis.call('zrange', KEYS[3], 0, 0)[1]
if owner == false and (first == nil or first == ARGV[1]) then
  redis.call('zrem', KEYS[3], ARGV[1])
  redis.call('zrem', KEYS[4], ARGV[1])
  local token = next_token(KEYS[2])
  redis.call('hset', KEYS[1], 'owner', ARGV[1], 'holds', 1, 'token', token)
  redis.call('pexpire', KEYS[1], ARGV[2])
  return {token, 1}
end
local timeout = tonumber(ARGV[3])
if ARGV[4] == '1' then
  if redis.call('zscore', KEYS[3], ARGV[1]) == false then
    local last = redis.call('zrange', KEYS[3], -1, -1, 'WITHSCORES')
    local ticket = 1
    if #last > 0 then ticket = tonumber(last[2]) + 1 end
    redis.call('zadd', KEYS[3], ticket, ARGV[1])
  end
  redis.call('zadd', KEYS[4], now + timeout, ARGV[1])
  for i = 3, 4 do
    if redis.call('pttl', KEYS[i]) < 2 * timeout then redis.call('pexpire', KEYS[i], 2 * timeout) end
  end
end
if owner ~= false then
  return {0, redis.call('pttl', KEYS[1])}
end
local firstDeadline = redis.call('zscore', KEYS[4], first)
if firstDeadline == false then return {0, timeout} end
return {0, math.max(1, tonumber(firstDeadline) - now)}
`,
};

/**
 * A waiter leaves the fair queue (it timed out, was aborted, or failed). If it was first and the lock
 * is free, the channel is told, so that the next waiter does not wait for the entry to expire.
 * KEYS[1] lock hash; KEYS[2] channel; KEYS[3] queue; KEYS[4] queue deadlines.
 * ARGV[1] owner; ARGV[2] publish command. Returns 1 if it was queued, else 0.
 */
export const FAIR_LEAVE_SCRIPT: LockScript = {
  name: 'dlockFairLeave',
  numberOfKeys: 4,
  lua: `${FAIR_QUEUE_PRELUDE}
local first = redis.call('zrange', KEYS[3], 0, 0)[1]
if redis.call('zrem', KEYS[3], ARGV[1]) == 0 then
  redis.call('zrem', KEYS[4], ARGV[1])
  return 0
end
redis.call('zrem', KEYS[4], ARGV[1])
if first == ARGV[1] and redis.call('exists', KEYS[1]) == 0 and redis.call('zcard', KEYS[3]) > 0 then
  redis.call(ARGV[2], KEYS[2], 'released')
end
return 1
`,
};
