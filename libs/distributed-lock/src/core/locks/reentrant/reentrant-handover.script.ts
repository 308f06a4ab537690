import type { ExclusiveKeys } from '../exclusive/exclusive-keys.js';
import { type PublishCommand, defineLockScript } from '../../scripts/lock-script.js';
import { GRANT_TO_LONGEST_WAITING_LUA } from '../exclusive/grant-to-longest-waiting.lua.js';
import type { HandoverReply } from '../../engine/lease-resource.js';

export interface ReentrantHandoverArgs extends ExclusiveKeys {
  /** The releasing owner. */
  readonly owner: string;
  /** The waiter of the same process that takes the lock over. */
  readonly successor: string;
  /** The successor's lease. */
  readonly leaseMs: number;
  /** The caller's client id (its process's waiting mark). */
  readonly client: string;
  /** The process's turn is over: if another process waits, the lock goes to it instead. */
  readonly yieldToOthers: boolean;
  readonly publish: PublishCommand;
  /** The caller of this process waiting after the successor, named in its waiting mark; '' when the successor is the last (the mark goes). */
  readonly nextWaiter: string;
  readonly grantLeaseMs: number;
  /** The successor's watchdog renews its lease (recorded as `renew`, for inspection). */
  readonly successorWatchdog: boolean;
  /** Hand over whatever holds the owner has (the caller knows of no other), instead of only its last one. */
  readonly all: boolean;
}

/**
 * Releases the caller's last hold of an exclusive lock and, in the same step, gives the lock to a
 * waiter of the same process (a hand-over): the lock is never free in between, so nobody is woken and
 * nobody races for it, and the waiter needs no round trip of its own. Replies {-1, 0} when the caller
 * is not the owner (nothing changed); {holds left, 0} when the caller holds more than one hold and
 * `all` is not set (nothing handed over); {0, token} when the successor holds it now, with a new fencing token and its
 * own lease; {0, -1} when, asked to yield, it found another process waiting and granted the lock to
 * the one that has waited longest instead, marking the caller's process as waiting, at the back (naming
 * the successor as its first waiting caller). When the successor takes it, the process's mark names the
 * caller after it, or goes if there is none.
 */
export const reentrantHandover = defineLockScript<ReentrantHandoverArgs, HandoverReply, [number, number]>({
  parse: ([remaining, token]) => {
    if (remaining === -1) return { outcome: 'not-owner' };
    if (remaining > 0) return { outcome: 'held', remaining };
    return token > 0 ? { outcome: 'handed-over', token } : { outcome: 'yielded' };
  },
  name: 'dlockReentrantHandover',
  guarded: true,
  keys: (a) => [a.lock, a.fence, a.channel],
  argv: (a) => [
    a.owner,
    a.successor,
    a.leaseMs,
    a.client,
    a.yieldToOthers ? '1' : '0',
    a.publish,
    a.nextWaiter,
    a.grantLeaseMs,
    a.successorWatchdog ? '1' : '0',
    a.all ? '1' : '0',
  ],
  helpers: [GRANT_TO_LONGEST_WAITING_LUA],
  lua: `
local lock_key, fence_key, channel = KEYS[1], KEYS[2], KEYS[3]
local owner_id, successor_id, lease_ms, client = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local yield_to_others, publish, next_waiter, grant_lease = ARGV[5] == '1', ARGV[6], ARGV[7], ARGV[8]
local renew = ARGV[9] or '0'
local all = ARGV[10] == '1'

local state = redis.call('hmget', lock_key, 'owner', 'holds', 'granted')
if state[1] ~= owner_id then
  return {-1, 0}
end
if not all and tonumber(state[2]) > 1 then
  return {redis.call('hincrby', lock_key, 'holds', -1), 0}
end
if yield_to_others and grant_to_longest_waiting(lock_key, fence_key, channel, publish, grant_lease, client, owner_id) then
  mark_waiting(lock_key, client, successor_id)
  return {0, -1}
end
local token = next_token(fence_key)
redis.call('hset', lock_key, 'owner', successor_id, 'holds', 1, 'token', token, 'renew', renew)
if state[3] then redis.call('hdel', lock_key, 'granted') end
redis.call('pexpire', lock_key, lease_ms)
if next_waiter == '' then
  unmark_waiting(lock_key, client)
else
  name_first(lock_key, client, next_waiter)
end
return {0, token}
`,
});
