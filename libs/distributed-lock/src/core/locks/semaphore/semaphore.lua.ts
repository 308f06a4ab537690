import type { SemaphoreKeys } from '../../scripts/lock-keys.js';
import { luaHelper } from '../../scripts/lua-helper.js';
import { NEXT_TOKEN_LUA } from '../../scripts/next-token.lua.js';

/**
 * What every semaphore script takes: the semaphore's keys, as one object built once per semaphore (not
 * spread into each call's arguments: an object of a dozen properties built per call cost the
 * acquisition about a quarter of its client CPU).
 */
export interface SemaphoreScriptArgs {
  readonly keys: SemaphoreKeys;
}

export const semaphoreKeyList = ({ keys: k }: SemaphoreScriptArgs): string[] => [k.state, k.holders, k.queue, k.queueDeadlines, k.fence, k.channel];

/**
 * Lua shared by the semaphore's scripts (their keys in one order: state, holders, queue, queue
 * deadlines, fence, channel; the names start with `sem_`, as helpers share one scope in a batch).
 *
 * Permits in use are counted in the state hash (`used`); each script reads it once and writes it at
 * most once. What has expired is dropped where it matters, not by every script: holders whose lease
 * ended (their permits come back: no permit leaks when a holder crashes) when a request does not fit
 * without them, and queued waiters that stopped refreshing their place (a crashed waiter holds the
 * line up for at most its queue timeout) whenever the line is served. The first waiter's own timer
 * (until the earliest lease end, see the acquire script's reply) is what looks again when a lease
 * ends without any script running.
 *
 * Waiters are served strictly in arrival order: only the first in line may take permits, and only all
 * it asked for at once, so callers asking for one permit cannot starve one asking for several.
 * Whenever permits come back or the line moves, `sem_serve_line` serves the front of the line.
 */
export const SEMAPHORE_LUA = luaHelper(
  'semaphore',
  `
local function sem_drop_waiter(state_key, queue_key, deadlines_key, waiter)
  if redis.call('zrem', queue_key, waiter) == 0 then
    return 0
  end
  redis.call('zrem', deadlines_key, waiter)
  redis.call('hdel', state_key, 'w:' .. waiter)
  return 1
end

local function sem_drop_dead_waiters(state_key, queue_key, deadlines_key, now)
  local dead = redis.call('zrangebyscore', deadlines_key, '-inf', now)
  for _, waiter in ipairs(dead) do
    sem_drop_waiter(state_key, queue_key, deadlines_key, waiter)
  end
  return #dead
end

-- Drops one holder's record; returns the permits it held (0 if it held none). The caller counts them out of 'used'.
local function sem_drop_holder(state_key, holders_key, holder)
  local held = redis.call('hget', state_key, 'h:' .. holder)
  redis.call('zrem', holders_key, holder)
  if not held then
    return 0
  end
  redis.call('hdel', state_key, 'h:' .. holder, 'd:' .. holder)
  return tonumber(string.match(held, '^%d+'))
end

-- Drops the holders whose lease ended by now; returns the permits they held.
local function sem_drop_expired_holders(state_key, holders_key, now)
  local freed = 0
  for _, holder in ipairs(redis.call('zrangebyscore', holders_key, '-inf', now)) do
    freed = freed + sem_drop_holder(state_key, holders_key, holder)
  end
  return freed
end

-- Serves the front of the line after permits came back or the line moved: dead waiters go, then the
-- first waiter, if all it asks for is free, is told ('next:<owner>': its process wakes it alone, and
-- its own attempt takes the permits); a first waiter whose request exceeds the size is told too, so that
-- it is refused at once. Stops at 'until_waiter' (the caller of an acquire, which takes permits itself).
-- Writes 'used' if 'dirty'. Returns the first waiter left in line (nil if none).
local function sem_serve_line(state_key, queue_key, deadlines_key, channel, publish, now, size, used, dirty, until_waiter)
  if dirty then
    redis.call('hset', state_key, 'used', used)
  end
  local first = redis.call('zrange', queue_key, 0, 0)[1]
  if first == nil then
    return nil
  end
  if sem_drop_dead_waiters(state_key, queue_key, deadlines_key, now) > 0 then
    first = redis.call('zrange', queue_key, 0, 0)[1]
  end
  if first ~= nil and first ~= until_waiter then
    local wants = tonumber(redis.call('hget', state_key, 'w:' .. first) or '1')
    if wants <= size - used or wants > size then
      redis.call(publish, channel, 'next:' .. first)
    end
  end
  return first
end
`,
  [NEXT_TOKEN_LUA],
);
