import { REENTER_LUA } from '../exclusive/reenter.lua.js';
import { FAIR_QUEUE_LUA } from './fair-queue.lua.js';
import { defineLockScript, parseAttempt, type AttemptReply } from '../../scripts/lock-script.js';
import { NEXT_TOKEN_LUA } from '../../scripts/next-token.lua.js';

export interface FairAcquireArgs {
  readonly lock: string;
  readonly fence: string;
  readonly queue: string;
  readonly queueDeadlines: string;
  readonly owner: string;
  readonly leaseMs: number;
  /** How long a queued waiter's entry lives without a refresh. */
  readonly queueTimeoutMs: number;
  /** Take (or keep) a place in the queue if not granted. */
  readonly queueOnFailure: boolean;
  /** The watchdog renews the hold: recorded as `renew` (1 or 0), for inspection. */
  readonly watchdog: boolean;
}

/**
 * Takes or re-enters a fair lock: granted only to its owner (reentrant) or, when free, to the first
 * live waiter in the queue (or to anyone when nobody queues). Replies {token, holds} when acquired,
 * else {0, ms until something can change}: the holder's lease, or, when the lock is free but another
 * waiter is first, the time until that waiter's entry expires. A waiter that fails keeps (or takes)
 * its place and refreshes its entry's deadline; waiters that stopped refreshing (crashed, or gave up
 * without a word) are dropped by every call, so a dead waiter blocks the ones behind it for at most
 * one entry timeout. All keys in one slot through the `{name}` hash tag.
 */
export const fairAcquire = defineLockScript<FairAcquireArgs, AttemptReply, [number, number]>({
  parse: parseAttempt,
  name: 'dlockFairAcquire',
  guarded: true,
  keys: (a) => [a.lock, a.fence, a.queue, a.queueDeadlines],
  argv: (a) => [a.owner, a.leaseMs, a.queueTimeoutMs, a.queueOnFailure ? '1' : '0', a.watchdog ? '1' : '0'],
  helpers: [FAIR_QUEUE_LUA, NEXT_TOKEN_LUA, REENTER_LUA],
  lua: `
local lock_key, fence_key, queue_key, deadlines_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner_id, lease_ms, timeout, queue_on_failure = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4] == '1'
local renew = ARGV[5] or '0'

local now = drop_dead_fair_waiters(queue_key, deadlines_key)
local holder = redis.call('hget', lock_key, 'owner')
if holder == owner_id then
  return reenter(lock_key, lease_ms, renew)
end
local first = redis.call('zrange', queue_key, 0, 0)[1]
if holder == false and (first == nil or first == owner_id) then
  redis.call('zrem', queue_key, owner_id)
  redis.call('zrem', deadlines_key, owner_id)
  local token = next_token(fence_key)
  redis.call('hset', lock_key, 'owner', owner_id, 'holds', 1, 'token', token, 'renew', renew)
  redis.call('pexpire', lock_key, lease_ms)
  return {token, 1}
end
if queue_on_failure then
  if redis.call('zscore', queue_key, owner_id) == false then
    local last = redis.call('zrange', queue_key, -1, -1, 'WITHSCORES')
    local ticket = 1
    if #last > 0 then ticket = tonumber(last[2]) + 1 end
    redis.call('zadd', queue_key, ticket, owner_id)
  end
  redis.call('zadd', deadlines_key, now + timeout, owner_id)
  for _, key in ipairs({queue_key, deadlines_key}) do
    if redis.call('pttl', key) < 2 * timeout then redis.call('pexpire', key, 2 * timeout) end
  end
end
if holder ~= false then
  return {0, redis.call('pttl', lock_key)}
end
local first_deadline = redis.call('zscore', deadlines_key, first)
if first_deadline == false then return {0, timeout} end
return {0, math.max(1, tonumber(first_deadline) - now)}
`,
});
