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
   * after it, 'last' when it is the last one; 'not-queued' for a first attempt; 'holding' for a
   * re-entry (the owner holds the lock in this process already).
   */
  readonly queue: 'others-wait' | 'last' | 'not-queued' | 'holding';
  /**
   * The first caller of this process that will be waiting for the lock after this attempt, named in
   * the process's waiting mark (a release grants the lock to it): this caller if it will wait and is
   * first (or not queued yet), else the first one in the process's line; when the attempt succeeds,
   * the first one after this caller ('' when none).
   */
  readonly firstIfFailed: string;
  readonly firstIfAcquired: string;
  /**
   * A lower bound of the server's time (ms) when this attempt was sent, if the caller knows the
   * server's clock: a hold of the caller's owner that Redis has from before then, and that the caller
   * does not hold in this process, is no re-entry (see below).
   */
  readonly sentAfterServerMs?: number;
  /** The watchdog renews the hold (no leaseTime): recorded as `renew` = 1 for inspection, else 0. */
  readonly watchdog: boolean;
}

const QUEUE_ARG = { 'others-wait': '1', last: '0', 'not-queued': '', holding: 'h' } as const;

/**
 * Takes or re-enters an exclusive lock. Replies {token, holds} when acquired, {0, pttl} when another
 * owner holds it.
 *
 * - A first acquisition draws a new fencing token (next_token); a reentrant one returns the same token
 *   and only ever lengthens the lease, so an inner short lease cannot cut the outer one short.
 * - `renew` in the hash says whether the holder's watchdog renews the lease (1) or not (0), for
 *   inspection only; a reentrant acquisition by the watchdog turns it on.
 * - The caller's owner already holding the lock in Redis is a re-entry when the caller holds it in
 *   this process ('holding'). Otherwise:
 *   - a hold drawn before this attempt was sent (its token's time is before `sentAfterServerMs`) is
 *     taken anew, with a new token and one hold: a grant to the caller (grant-to-longest-waiting: its
 *     owner id, a short lease, `granted` until claimed) that it did not hear of in time to hold it by
 *     its message; a hold a failover brought back after its owner had released it (re-entered, its
 *     token, used and passed since, went out again: simulator seed 14); or one an earlier attempt
 *     left with a lost reply;
 *   - a hold drawn after this attempt was sent means this attempt runs late (given up on, or aborted):
 *     it re-enters that hold, so that its caller's give-back of the late grant takes exactly that hold
 *     back (see Acquisition.giveBackLateGrant), and a grant its caller holds by its message stays held
 *     (taken anew, with a new token, the give-back of the late reply freed it under that caller:
 *     simulator seed 41149);
 *   - without the server's clock, it re-enters, except that a first attempt (not queued) takes a
 *     grant anew (it cannot be what that grant was made for: the grant follows the mark its first
 *     attempt wrote; a failover may have brought it back: simulator seed 1006).
 */
export const reentrantAcquire = defineLockScript<ReentrantAcquireArgs, AttemptReply, [number, number]>({
  parse: parseAttempt,
  name: 'dlockReentrantAcquire',
  guarded: true,
  keys: (a) => [a.lock, a.fence],
  argv: (a) => [a.owner, a.leaseMs, a.waitingClient, QUEUE_ARG[a.queue], a.watchdog ? '1' : '0', a.firstIfFailed, a.firstIfAcquired, a.sentAfterServerMs ?? ''],
  helpers: [NEXT_TOKEN_LUA, WAITING_MARKS_LUA, REENTER_LUA],
  lua: `
local lock_key, fence_key = KEYS[1], KEYS[2]
local owner_id, lease_ms = ARGV[1], ARGV[2]
local client = ARGV[3] or ''
local queue = ARGV[4] or ''
local renew = ARGV[5] or '0'

local sent_after = tonumber(ARGV[8] or '')
local state = redis.call('hmget', lock_key, 'owner', 'granted', 'token')
local holder = state[1]
if holder == false or holder == owner_id then
  local reply
  local earlier = holder ~= false and sent_after ~= nil and tonumber(state[3]) < sent_after * 1000
  if holder == false or (queue ~= 'h' and (earlier or (sent_after == nil and state[2] and queue == ''))) then
    local token = next_token(fence_key)
    redis.call('hset', lock_key, 'owner', owner_id, 'holds', 1, 'token', token, 'renew', renew)
    if state[2] then redis.call('hdel', lock_key, 'granted') end
    redis.call('pexpire', lock_key, lease_ms)
    reply = {token, 1}
  else
    if state[2] then redis.call('hdel', lock_key, 'granted') end
    reply = reenter(lock_key, lease_ms, renew)
  end
  if client ~= '' and queue == '1' then
    mark_waiting(lock_key, client, ARGV[7])
  elseif client ~= '' and queue == '0' then
    unmark_waiting(lock_key, client)
  end
  return reply
end
if client ~= '' then
  if redis.call('hexists', lock_key, 'w:' .. client) == 0 then
    mark_waiting(lock_key, client, ARGV[6])
  elseif ARGV[6] ~= holder then
    name_first(lock_key, client, ARGV[6])
  end
end
return {0, redis.call('pttl', lock_key)}
`,
});
