import type { SemaphoreKeys } from './semaphore-keys.js';
import { luaHelper } from '../../scripts/lua-helper.js';
import { NEXT_TOKEN_LUA } from '../../scripts/next-token.lua.js';
import { grantedMessageLua } from '../granted.message.js';
import { nextMessageLua, SEMAPHORE_GRANT_LEASE_MS } from './semaphore.messages.js';

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
 * Permits in use are counted in the state hash (`used`); each script reads it once and writes it
 * once (twice when an acquire takes permits and then serves the line). So are the waiters in line
 * (`q`, one more per place taken, one less per place left, in the same script as the queue's change):
 * a script that read `q` as 0 does not look at the line, so the common case (free permits, nobody
 * waiting) reads and writes the state hash and the holders only. What has expired is dropped where it matters, not by every script: holders whose lease
 * ended (their permits come back: no permit leaks when a holder crashes) when a request does not fit
 * without them, and queued waiters that stopped refreshing their place (a crashed waiter holds the
 * line up for at most its queue timeout) whenever the line is served. The first waiter's own timer
 * (until the earliest lease end, see the acquire script's reply) is what looks again when a lease
 * ends without any script running.
 *
 * Waiters are served strictly in arrival order: only the first in line may take permits, and only all
 * it asked for at once, so callers asking for one permit cannot starve one asking for several.
 * Whenever permits come back or the line moves, `sem_serve_line` serves the front of the line: the
 * script that freed them grants them to the first waiters, whose processes hold them from the message
 * on, without an attempt of their own (a hand-over with no round trip after the release).
 */
export const SEMAPHORE_LUA = luaHelper(
  'semaphore',
  `
-- The channel of the process a waiter belongs to (processChannel): owner ids are '<client id>:<n>'.
local function sem_process_channel(channel, waiter)
  return channel .. ':' .. string.match(waiter, '^[^:]*')
end

local function sem_drop_waiter(state_key, queue_key, deadlines_key, waiter)
  if redis.call('zrem', queue_key, waiter) == 0 then
    return 0
  end
  redis.call('zrem', deadlines_key, waiter)
  redis.call('hdel', state_key, 'w:' .. waiter, 'd:' .. waiter)
  redis.call('hincrby', state_key, 'q', -1)
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

-- Serves the front of the line after permits came back or the line moved: dead waiters go; then, for
-- as long as the first waiter's request fits, it is granted its permits in this script (a hold with a
-- lease of ${SEMAPHORE_GRANT_LEASE_MS} ms, its token, its watchdog flag from its place) and leaves the line, and
-- its process's channel says 'granted:<owner>:<token>:<lease end, server ms>': that waiter holds them from the
-- message on, and lengthens the lease to its own in the background (a claim: one renewal). A first
-- waiter whose request exceeds the size is told 'next:<owner>', so that it is refused at once. Stops at
-- 'until_waiter' (the caller of an acquire, which takes permits itself). Writes 'used' if it changed
-- or 'dirty'. 'queued': the state's waiting count ('q') as the caller read it, or nil if it did not:
-- with none waiting, the line is not looked at. Returns the first waiter left in line (nil if none)
-- and the permits now in use.
local function sem_serve_line(state_key, holders_key, queue_key, deadlines_key, fence_key, channel, publish, now, size, used, dirty, until_waiter, queued)
  local first = nil
  if queued == nil or tonumber(queued) ~= 0 then
    first = redis.call('zrange', queue_key, 0, 0)[1]
  end
  if first ~= nil and sem_drop_dead_waiters(state_key, queue_key, deadlines_key, now) > 0 then
    first = redis.call('zrange', queue_key, 0, 0)[1]
  end
  while first ~= nil and first ~= until_waiter do
    local place = redis.call('hmget', state_key, 'w:' .. first, 'd:' .. first)
    local wants = tonumber(place[1] or '1')
    if wants > size then
      redis.call(publish, sem_process_channel(channel, first), ${nextMessageLua('first')})
      break
    end
    if wants > size - used then
      break
    end
    sem_drop_waiter(state_key, queue_key, deadlines_key, first)
    local token = next_token(fence_key)
    local lease_end = now + ${SEMAPHORE_GRANT_LEASE_MS}
    used = used + wants
    dirty = true
    redis.call('hset', state_key, 'h:' .. first, string.format('%d:%.0f', wants, token), 'd:' .. first, place[2] or '0')
    redis.call('zadd', holders_key, lease_end, first)
    redis.call(publish, sem_process_channel(channel, first), ${grantedMessageLua('first', 'token', 'lease_end')})
    first = redis.call('zrange', queue_key, 0, 0)[1]
  end
  if dirty then
    redis.call('hset', state_key, 'used', used)
  end
  return first, used
end
`,
  [NEXT_TOKEN_LUA],
);
