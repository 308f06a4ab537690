import { REENTER_LUA } from '../exclusive/reenter.lua.js';
import { defineLockScript, parseAttempt, type AttemptReply } from '../../scripts/lock-script.js';
import { NEXT_TOKEN_LUA } from '../../scripts/next-token.lua.js';
import { WAITING_MARKS_LUA } from '../exclusive/waiting-marks.lua.js';

export interface ReentrantAcquireArgs {
  readonly lock: string;
  readonly fence: string;
  readonly owner: string;
  readonly leaseMs: number;
  /** The caller's client id when it will wait if it fails ('' otherwise: RedLock, tryLock without wait). */
  readonly waitingClient: string;
  /**
   * For a caller queued in its process: 'others-wait' when callers of the same client still wait
   * after it, 'last' when it is the last one; 'not-queued' for a first attempt.
   */
  readonly queue: 'others-wait' | 'last' | 'not-queued';
  /** The watchdog renews the hold (no leaseTime): recorded as `renew` = 1 for inspection, else 0. */
  readonly watchdog: boolean;
}

const QUEUE_ARG = { 'others-wait': '1', last: '0', 'not-queued': '' } as const;

/**
 * Takes or re-enters an exclusive lock. Replies {token, holds} when acquired, {0, pttl} when another
 * owner holds it.
 *
 * - A first acquisition draws a new fencing token (next_token); a reentrant one returns the same token
 *   and only ever lengthens the lease, so an inner short lease cannot cut the outer one short.
 * - `renew` in the hash says whether the holder's watchdog renews the lease (1) or not (0), for
 *   inspection only; a reentrant acquisition by the watchdog turns it on.
 * - A lock granted to the caller's client (placeholder owner `<client>:grant`, see
 *   grant-to-longest-waiting) is taken over: the caller becomes the owner with its lease and a new
 *   token. Not the grant's: a placeholder a failover brought back (the promoted replica had not seen
 *   its take-over) holds a token that was already used (simulator seed 1006).
 * - A caller that will wait and fails marks its client as waiting unless it is already marked: the
 *   lock's next release grants it to the client marked first. A caller that gets the lock while others
 *   of its client still wait marks the client again, at the back (round robin between processes); the
 *   last one removes the mark. A first attempt that succeeds leaves marks alone (its client has nobody
 *   queued, so it has no mark).
 */
export const reentrantAcquire = defineLockScript<ReentrantAcquireArgs, AttemptReply, [number, number]>({
  parse: parseAttempt,
  name: 'dlockReentrantAcquire',
  guarded: true,
  keys: (a) => [a.lock, a.fence],
  argv: (a) => [a.owner, a.leaseMs, a.waitingClient, QUEUE_ARG[a.queue], a.watchdog ? '1' : '0'],
  helpers: [NEXT_TOKEN_LUA, WAITING_MARKS_LUA, REENTER_LUA],
  lua: `
local lock_key, fence_key = KEYS[1], KEYS[2]
local owner_id, lease_ms = ARGV[1], ARGV[2]
local client = ARGV[3] or ''
local queue = ARGV[4] or ''
local renew = ARGV[5] or '0'

local holder = redis.call('hget', lock_key, 'owner')
if holder == false or (client ~= '' and holder == client .. ':grant') then
  local token = next_token(fence_key)
  redis.call('hset', lock_key, 'owner', owner_id, 'holds', 1, 'token', token, 'renew', renew)
  redis.call('pexpire', lock_key, lease_ms)
  if client ~= '' and queue == '1' then
    mark_waiting(lock_key, client)
  elseif client ~= '' and queue == '0' then
    unmark_waiting(lock_key, client)
  end
  return {token, 1}
end
if holder == owner_id then
  if client ~= '' and queue == '0' then
    unmark_waiting(lock_key, client)
  end
  return reenter(lock_key, lease_ms, renew)
end
if client ~= '' and redis.call('hexists', lock_key, 'w:' .. client) == 0 then
  mark_waiting(lock_key, client)
end
return {0, redis.call('pttl', lock_key)}
`,
});
