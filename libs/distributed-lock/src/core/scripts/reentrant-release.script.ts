import type { LockScript } from './lock-script.js';

/**
 * Releases one hold (or all holds with ARGV[3] = 'all') of an exclusive lock, if the caller owns it.
 * KEYS[1] lock hash; KEYS[2] unlock channel.
 * ARGV[1] owner id; ARGV[2] publish command ('publish' or 'spublish'); ARGV[3] '1' or 'all';
 * ARGV[4] the holds the caller expects before this release, or '' for no check (see below).
 * Returns -1 when the caller is not the owner (nothing changed), -2 when the holds differ from
 * ARGV[4] (an earlier release whose reply was lost did go through: nothing changed), the holds left
 * when still held, 0 when the lock was deleted, in which case the channel is told so that one waiter
 * can take it. ARGV[4] makes retrying a release with an unknown outcome safe.
 */
export const REENTRANT_RELEASE_SCRIPT: LockScript = {
  name: 'dlockReentrantRelease',
  numberOfKeys: 2,
  lua: `
local state = redis.call('hmget', KEYS[1], 'owner', 'holds')
if state[1] ~= ARGV[1] then
  return -1
end
if ARGV[4] ~= '' and state[2] ~= ARGV[4] then
  return -2
end
if ARGV[3] ~= 'all' and tonumber(state[2]) > 1 then
  return redis.call('hincrby', KEYS[1], 'holds', -1)
end
redis.call('del', KEYS[1])
redis.call(ARGV[2], KEYS[2], 'released')
return 0
`,
};
