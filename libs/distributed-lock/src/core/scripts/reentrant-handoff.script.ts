import type { LockScript } from './lock-script.js';
import { PASS_ON_LUA } from './pass-on.lua.js';

/**
 * Releases the caller's last hold of an exclusive lock and, in the same step, grants the lock to a
 * waiter of the same process (a local hand-over): the lock is never free in between, so nobody is
 * woken and nobody races for it, and the waiter needs no round trip of its own.
 * KEYS[1] lock hash; KEYS[2] fencing counter; KEYS[3] channel.
 * ARGV[1] owner id of the caller; ARGV[2] the successor's owner id; ARGV[3] the successor's lease ms;
 * ARGV[4] the caller's client id; ARGV[5] '1' to yield to other clients if they wait; ARGV[6] the
 * publish command; ARGV[7] '1' when the successor is the client's last waiter (its mark goes);
 * ARGV[8] lease ms of a grant to another client.
 * Returns {-1, 0} when the caller is not the owner (nothing changed); {holds left, 0} when the caller
 * still holds more than one hold (nothing handed over); {0, token} when the successor holds it now,
 * with a new fencing token (INCR, as for any new holder) and its own lease; {0, -1} when, asked to
 * yield, it found another client waiting and granted the lock to the one that has waited longest
 * (see pass-on) instead, marking the caller's client as waiting, at the back.
 */
export const REENTRANT_HANDOFF_SCRIPT: LockScript = {
  name: 'dlockReentrantHandoff',
  numberOfKeys: 3,
  lua: `${PASS_ON_LUA}
local state = redis.call('hmget', KEYS[1], 'owner', 'holds')
if state[1] ~= ARGV[1] then
  return {-1, 0}
end
if tonumber(state[2]) > 1 then
  return {redis.call('hincrby', KEYS[1], 'holds', -1), 0}
end
if ARGV[5] == '1' and pass_on(KEYS[1], KEYS[2], KEYS[3], ARGV[6], ARGV[8], ARGV[4]) then
  redis.call('hset', KEYS[1], 'w:' .. ARGV[4], redis.call('hincrby', KEYS[1], 'wseq', 1))
  return {0, -1}
end
local token = next_token(KEYS[2])
redis.call('hset', KEYS[1], 'owner', ARGV[2], 'holds', 1, 'token', token)
redis.call('pexpire', KEYS[1], ARGV[3])
if ARGV[7] == '1' then
  redis.call('hdel', KEYS[1], 'w:' .. ARGV[4])
end
return {0, token}
`,
};
