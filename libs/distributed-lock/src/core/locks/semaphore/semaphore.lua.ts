import type { SemaphoreKeys } from '../../scripts/lock-keys.js';
import { luaHelper } from '../../scripts/lua-helper.js';

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
 * Lua shared by the semaphore's scripts. Every script first drops what has expired: holders whose
 * lease ended (their permits come back: no permit leaks when a holder crashes) and queued waiters that
 * stopped refreshing their place (a crashed waiter holds the line up for at most its queue timeout).
 *
 * Waiters are served strictly in arrival order: only the first in line may take permits, and only
 * all it asked for at once, so callers asking for one permit cannot starve one asking for several.
 * Whenever permits come back or the line moves, `wake_if_first_fits` tells the first waiter, and
 * only it, if its request now fits: `next:<its owner id>` on the channel (its process wakes that
 * waiter; no other process is woken, and nobody races it). No polling.
 */
export const SEMAPHORE_LUA = luaHelper(
  'semaphore',
  `
local function server_ms()
  local clock = redis.call('time')
  return tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
end

local function ensure_size(state_key, initial)
  if redis.call('hexists', state_key, 'permits') == 0 then
    redis.call('hset', state_key, 'permits', initial)
  end
end

local function drop_waiter(state_key, queue_key, deadlines_key, waiter)
  redis.call('zrem', deadlines_key, waiter)
  redis.call('hdel', state_key, 'w:' .. waiter)
  return redis.call('zrem', queue_key, waiter)
end

local function drop_dead_permit_waiters(state_key, queue_key, deadlines_key, now)
  local dead = redis.call('zrangebyscore', deadlines_key, '-inf', now)
  for _, waiter in ipairs(dead) do
    drop_waiter(state_key, queue_key, deadlines_key, waiter)
  end
  return #dead
end

local function drop_holder(state_key, holders_key, holder)
  redis.call('zrem', holders_key, holder)
  local held = redis.call('hget', state_key, 'h:' .. holder)
  if not held then
    return 0
  end
  local permits = tonumber(string.match(held, '^(%d+)'))
  redis.call('hdel', state_key, 'h:' .. holder, 'd:' .. holder)
  redis.call('hincrby', state_key, 'used', -permits)
  return permits
end

local function drop_expired_holders(state_key, holders_key, now)
  local freed = 0
  for _, holder in ipairs(redis.call('zrangebyscore', holders_key, '-inf', now)) do
    freed = freed + drop_holder(state_key, holders_key, holder)
  end
  return freed
end

local function free_permits(state_key)
  local state = redis.call('hmget', state_key, 'permits', 'used')
  return tonumber(state[1] or '0') - tonumber(state[2] or '0')
end

local function first_in_line(state_key, queue_key)
  local first = redis.call('zrange', queue_key, 0, 0)[1]
  if first == nil then
    return nil, 0
  end
  return first, tonumber(redis.call('hget', state_key, 'w:' .. first) or '1')
end

local function wake_first(channel, publish, first)
  redis.call(publish, channel, 'next:' .. first)
end

local function wake_if_first_fits(state_key, queue_key, channel, publish)
  local first, wants = first_in_line(state_key, queue_key)
  if first ~= nil and wants <= free_permits(state_key) then
    wake_first(channel, publish, first)
  end
end
`,
);
