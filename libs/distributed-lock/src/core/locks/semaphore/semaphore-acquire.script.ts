import { type PublishCommand, defineLockScript, parseAttempt, type AttemptReply } from '../../scripts/lock-script.js';
import { NEXT_TOKEN_LUA } from '../../scripts/next-token.lua.js';
import { SEMAPHORE_LUA, semaphoreKeyList, type SemaphoreScriptArgs } from './semaphore.lua.js';

export interface SemaphoreAcquireArgs extends SemaphoreScriptArgs {
  /** The acquisition's own owner id: one holder per acquisition (permits are not reentrant). */
  readonly owner: string;
  readonly permits: number;
  readonly leaseMs: number;
  /** The semaphore's size, stored if none is stored yet (the first use sets it). */
  readonly initialPermits: number;
  /** How long a queued waiter's place lives without a refresh. */
  readonly queueTimeoutMs: number;
  /** Take (or keep, and refresh) a place in the line if not granted. */
  readonly queueOnFailure: boolean;
  readonly publish: PublishCommand;
  /** The watchdog renews the lease (no leaseTime): recorded as `d:<holder>` = 1 for inspection, else 0. */
  readonly watchdog: boolean;
}

/**
 * Takes `permits` permits for one acquisition, with a lease. Replies {token, 1} when granted (a new
 * fencing token per acquisition, from the name's counter), {0, ms until something can change} when
 * not, and {-1, size} when the request is larger than the semaphore itself (it could never be met,
 * and would hold up everyone behind it).
 *
 * - Granted only to the first in line (or to anyone when nobody waits), and only when all it asked
 *   for is free: strict arrival order, so a caller asking for several permits is never overtaken.
 * - A failed caller that will wait takes (or keeps) its place and refreshes its deadline.
 * - A grant that leaves enough for the next in line, expired leases that gave permits back, or dead
 *   waiters dropped from the front, wake the first waiter (see wake_if_first_fits).
 * - An acquisition that already holds (its earlier attempt was granted but the reply was lost) gets
 *   the same grant back, its lease lengthened.
 * - The wait hint is the earliest lease end (a crashed holder's permits come back then), or, when the
 *   first waiter is another and fits, the time until its place expires; at most the queue timeout.
 */
/** A semaphore attempt's reply: an attempt's, or a request larger than the size (which could never be met). */
export type PermitsAttemptReply = AttemptReply | { readonly acquired: false; readonly tooMany: true; readonly size: number };

export const semaphoreAcquire = defineLockScript<SemaphoreAcquireArgs, PermitsAttemptReply, [number, number]>({
  parse: (raw) => (raw[0] === -1 ? { acquired: false, tooMany: true, size: raw[1] } : parseAttempt(raw)),
  name: 'dlockSemaphoreAcquire',
  guarded: true,
  keys: semaphoreKeyList,
  argv: (a) => [a.owner, a.permits, a.leaseMs, a.initialPermits, a.queueTimeoutMs, a.queueOnFailure ? '1' : '0', a.publish, a.watchdog ? '1' : '0'],
  helpers: [SEMAPHORE_LUA, NEXT_TOKEN_LUA],
  lua: `
local state_key, holders_key, queue_key, deadlines_key, fence_key, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local owner_id, wanted, lease_ms, initial_permits = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local queue_timeout, queue_on_failure, publish, renew = tonumber(ARGV[5]), ARGV[6] == '1', ARGV[7], ARGV[8] or '0'

local now = server_ms()
ensure_size(state_key, initial_permits)
local moved = drop_dead_permit_waiters(state_key, queue_key, deadlines_key, now) > 0
local freed = drop_expired_holders(state_key, holders_key, now)

local mine = redis.call('hget', state_key, 'h:' .. owner_id)
if mine then
  redis.call('zadd', holders_key, now + lease_ms, owner_id)
  return {tonumber(string.match(mine, ':(%d+)$')), 1}
end

local size = tonumber(redis.call('hget', state_key, 'permits'))
if wanted > size then
  drop_waiter(state_key, queue_key, deadlines_key, owner_id)
  wake_if_first_fits(state_key, queue_key, channel, publish)
  return {-1, size}
end

local first = redis.call('zrange', queue_key, 0, 0)[1]
local free = free_permits(state_key)
if (first == nil or first == owner_id) and wanted <= free then
  drop_waiter(state_key, queue_key, deadlines_key, owner_id)
  local token = next_token(fence_key)
  redis.call('hset', state_key, 'h:' .. owner_id, wanted .. ':' .. string.format('%.0f', token), 'd:' .. owner_id, renew)
  redis.call('hincrby', state_key, 'used', wanted)
  redis.call('zadd', holders_key, now + lease_ms, owner_id)
  wake_if_first_fits(state_key, queue_key, channel, publish)
  return {token, 1}
end

if queue_on_failure then
  if redis.call('zscore', queue_key, owner_id) == false then
    local last = redis.call('zrange', queue_key, -1, -1, 'WITHSCORES')
    local ticket = 1
    if #last > 0 then ticket = tonumber(last[2]) + 1 end
    redis.call('zadd', queue_key, ticket, owner_id)
  end
  redis.call('hset', state_key, 'w:' .. owner_id, wanted)
  redis.call('zadd', deadlines_key, now + queue_timeout, owner_id)
end
if freed > 0 or moved then
  wake_if_first_fits(state_key, queue_key, channel, publish)
end

local wait = queue_timeout
local earliest = redis.call('zrange', holders_key, 0, 0, 'WITHSCORES')
if #earliest > 0 then
  wait = math.min(wait, tonumber(earliest[2]) - now)
end
if first ~= nil and first ~= owner_id then
  local _, first_wants = first_in_line(state_key, queue_key)
  local first_deadline = redis.call('zscore', deadlines_key, first)
  if first_wants <= free and first_deadline then
    wait = math.min(wait, tonumber(first_deadline) - now)
  end
end
return {0, math.max(1, wait)}
`,
});
