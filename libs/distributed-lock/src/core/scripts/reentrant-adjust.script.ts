import type { LockScript } from './lock-script.js';

/**
 * Sets the holds of `owner`'s lock to what its process knows it holds. Used when a grant reports more
 * holds than that: an earlier grant whose reply was lost (connection dropped, failover) left a phantom
 * hold that no code would ever release. KEYS[1] lock hash; ARGV[1] owner; ARGV[2] holds. Returns 1 if
 * adjusted, 0 if the owner does not hold it.
 */
export const REENTRANT_ADJUST_SCRIPT: LockScript = {
  name: 'dlockReentrantAdjust',
  numberOfKeys: 1,
  lua: `
if redis.call('hget', KEYS[1], 'owner') ~= ARGV[1] then
  return 0
end
redis.call('hset', KEYS[1], 'holds', ARGV[2])
return 1
`,
};
