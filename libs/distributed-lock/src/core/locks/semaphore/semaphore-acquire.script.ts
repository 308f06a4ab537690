import { type PublishCommand, defineLockScript, parseAttempt, type AttemptReply } from '../../scripts/lock-script.js';
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
  /**
   * An earlier attempt of this acquisition may have taken a place in the line (the caller waits in its
   * process's line). False on a first attempt: owner ids are new per acquisition, so it has no place to
   * look for or to leave.
   */
  readonly queued: boolean;
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
 * - Holders whose lease ended are dropped when the request does not fit without them; dead waiters
 *   whenever someone waits. What that frees, and a grant to the first in line, serves the line
 *   behind (sem_serve_line).
 * - A failed caller that will wait takes (or keeps) its place and refreshes its deadline.
 * - An acquisition that already holds (its earlier attempt was granted but the reply was lost) gets
 *   the same grant back, its lease lengthened.
 * - The wait hint is the earliest lease end (a crashed holder's permits come back then), at most the
 *   queue timeout.
 *
 * The common case, free permits and nobody waiting, costs one reading of the clock, one HMGET of the
 * size, the permits in use, the caller's own grant and the waiting count (0: the line is not looked
 * at), the token, one HSET (with the size, on a semaphore's first use) and one ZADD.
 */
/** A semaphore attempt's reply: an attempt's, or a request larger than the size (which could never be met). */
export type PermitsAttemptReply = AttemptReply | { readonly acquired: false; readonly tooMany: true; readonly size: number };

export const semaphoreAcquire = defineLockScript<SemaphoreAcquireArgs, PermitsAttemptReply, [number, number]>({
  parse: (raw) => (raw[0] === -1 ? { acquired: false, tooMany: true, size: raw[1] } : parseAttempt(raw)),
  name: 'dlockSemaphoreAcquire',
  guarded: true,
  keys: semaphoreKeyList,
  argv: (a) => [
    a.owner,
    a.permits,
    a.leaseMs,
    a.initialPermits,
    a.queueTimeoutMs,
    a.queueOnFailure ? '1' : '0',
    a.publish,
    a.watchdog ? '1' : '0',
    a.queued ? '1' : '0',
  ],
  helpers: [SEMAPHORE_LUA],
  lua: `
local state_key, holders_key, queue_key, deadlines_key, fence_key, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local owner_id, wanted_arg, lease_ms, initial_permits = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
local wanted = tonumber(wanted_arg)
local queue_timeout, queue_on_failure, publish, renew = tonumber(ARGV[5]), ARGV[6] == '1', ARGV[7], ARGV[8]
local queued = ARGV[9] == '1'

local now = now_ms()
local state = redis.call('hmget', state_key, 'permits', 'used', 'h:' .. owner_id, 'q')
if state[3] then
  redis.call('zadd', holders_key, now + lease_ms, owner_id)
  return {tonumber(string.match(state[3], ':(%d+)$')), 1}
end
-- A semaphore nobody used yet gets its size written with the grant, or before the reply if none.
local fresh = not state[1]
local size = tonumber(state[1] or initial_permits)
local used = tonumber(state[2] or '0')

if wanted > size then
  if fresh then
    redis.call('hset', state_key, 'permits', initial_permits)
  end
  if queued and sem_drop_waiter(state_key, queue_key, deadlines_key, owner_id) == 1 then
    sem_serve_line(state_key, holders_key, queue_key, deadlines_key, fence_key, channel, publish, now, size, used, false, nil, nil)
  end
  return {-1, size}
end

local first = nil
if tonumber(state[4] or '0') ~= 0 then
  first = redis.call('zrange', queue_key, 0, 0)[1]
end
local moved = first ~= nil and sem_drop_dead_waiters(state_key, queue_key, deadlines_key, now) > 0
local freed = 0
if wanted > size - used then
  freed = sem_drop_expired_holders(state_key, holders_key, now)
  used = used - freed
end
if moved or freed > 0 then
  first, used = sem_serve_line(state_key, holders_key, queue_key, deadlines_key, fence_key, channel, publish, now, size, used, freed > 0, owner_id, nil)
end

if (first == nil or first == owner_id) and wanted <= size - used then
  if first == owner_id then
    sem_drop_waiter(state_key, queue_key, deadlines_key, owner_id)
  end
  local token = next_token(fence_key)
  used = used + wanted
  if fresh then
    redis.call('hset', state_key, 'h:' .. owner_id, string.format('%d:%.0f', wanted, token), 'd:' .. owner_id, renew, 'used', used, 'permits', initial_permits)
  else
    redis.call('hset', state_key, 'h:' .. owner_id, string.format('%d:%.0f', wanted, token), 'd:' .. owner_id, renew, 'used', used)
  end
  redis.call('zadd', holders_key, now + lease_ms, owner_id)
  if first == owner_id then
    sem_serve_line(state_key, holders_key, queue_key, deadlines_key, fence_key, channel, publish, now, size, used, false, nil, nil)
  end
  return {token, 1}
end

if fresh then
  redis.call('hset', state_key, 'permits', initial_permits)
end
if queue_on_failure then
  if not queued or redis.call('zscore', queue_key, owner_id) == false then
    local last = redis.call('zrange', queue_key, -1, -1, 'WITHSCORES')
    local ticket = 1
    if #last > 0 then ticket = tonumber(last[2]) + 1 end
    redis.call('zadd', queue_key, ticket, owner_id)
    redis.call('hset', state_key, 'w:' .. owner_id, wanted_arg, 'd:' .. owner_id, renew)
    redis.call('hincrby', state_key, 'q', 1)
  end
  redis.call('zadd', deadlines_key, now + queue_timeout, owner_id)
end

local wait = queue_timeout
local earliest = redis.call('zrange', holders_key, 0, 0, 'WITHSCORES')
if #earliest > 0 then
  wait = math.min(wait, tonumber(earliest[2]) - now)
end
return {0, math.max(1, wait)}
`,
});
