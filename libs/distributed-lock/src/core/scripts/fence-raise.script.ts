import type { LockScript } from './lock-script.js';

/**
 * RedLock: after a quorum granted a lock, raise every node's fencing counter (and the lock's stored
 * token, if `owner` holds it there) to the token the quorum agreed on: the highest of theirs. Any
 * later quorum overlaps this one, so its token is higher. KEYS[1] counter, KEYS[2] lock hash;
 * ARGV[1] owner, ARGV[2] token. Returns 1.
 */
export const FENCE_RAISE_SCRIPT: LockScript = {
  name: 'dlockFenceRaise',
  numberOfKeys: 2,
  lua: `
local token = tonumber(ARGV[2])
if tonumber(redis.call('get', KEYS[1]) or '0') < token then
  redis.call('set', KEYS[1], ARGV[2])
end
if redis.call('hget', KEYS[2], 'owner') == ARGV[1] then
  redis.call('hset', KEYS[2], 'token', ARGV[2])
end
return 1
`,
};
