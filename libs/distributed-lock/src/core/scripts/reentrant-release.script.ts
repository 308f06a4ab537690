import type { LockScript } from './lock-script.js';
import { PASS_ON_LUA } from './pass-on.lua.js';

/**
 * Releases one hold (or all holds with ARGV[3] = 'all') of an exclusive lock, if the caller owns it.
 * KEYS[1] lock hash; KEYS[2] unlock channel; KEYS[3] fencing counter.
 * ARGV[1] owner id; ARGV[2] publish command ('publish' or 'spublish'); ARGV[3] '1' or 'all';
 * ARGV[4] the holds the caller expects before this release, or '' for no check (see below);
 * ARGV[5] lease ms of a grant to a waiting client (see pass-on); ARGV[6] the caller's client id when
 * other callers of its process still wait for the lock ('' otherwise): when the lock goes to another
 * client, the caller's is marked as waiting, at the back.
 * Returns -1 when the caller is not the owner (nothing changed), -2 when the holds differ from
 * ARGV[4] (an earlier release whose reply was lost did go through: nothing changed), the holds left
 * when still held, 0 when the caller's last hold is gone. Then the lock goes to the client that has
 * waited longest (`grant:<client>` on the channel), or, when no client is marked as waiting, it is
 * deleted and the channel says `released`, so that one waiter per process can take it. ARGV[4]
 * makes retrying a release with an unknown outcome safe.
 */
export const REENTRANT_RELEASE_SCRIPT: LockScript = {
  name: 'dlockReentrantRelease',
  numberOfKeys: 3,
  lua: `${PASS_ON_LUA}
local state = redis.call('hmget', KEYS[1], 'owner', 'holds', 'wseq')
if state[1] ~= ARGV[1] then
  return -1
end
if ARGV[4] ~= '' and state[2] ~= ARGV[4] then
  return -2
end
if ARGV[3] ~= 'all' and tonumber(state[2]) > 1 then
  return redis.call('hincrby', KEYS[1], 'holds', -1)
end
if state[3] and pass_on(KEYS[1], KEYS[3], KEYS[2], ARGV[2], ARGV[5], '') then
  local mine = ARGV[6] or ''
  if mine ~= '' and redis.call('hget', KEYS[1], 'owner') ~= mine .. ':grant' then
    redis.call('hset', KEYS[1], 'w:' .. mine, redis.call('hincrby', KEYS[1], 'wseq', 1))
  end
  return 0
end
redis.call('del', KEYS[1])
redis.call(ARGV[2], KEYS[2], 'released')
return 0
`,
};
