import type { LockScript } from './lock-script.js';

/**
 * Takes or re-enters an exclusive lock.
 * KEYS[1] lock hash {owner, holds, token}; KEYS[2] fencing counter (same slot through the hash tag).
 * ARGV[1] owner id; ARGV[2] lease ms.
 * Returns {token, holds} when acquired, {0, pttl} when another owner holds it.
 * A first acquisition draws a new fencing token (INCR, never reset); a reentrant one returns the same
 * token and only ever lengthens the lease, so an inner short lease cannot cut the outer one short.
 */
export const REENTRANT_ACQUIRE_SCRIPT: LockScript = {
  name: 'dlockReentrantAcquire',
  numberOfKeys: 2,
  lua: `
local owner = redis.call('hget', KEYS[1], 'owner')
if owner == false then
  local token = redis.call('incr', KEYS[2])
  redis.call('hset', KEYS[1], 'owner', ARGV[1], 'holds', 1, 'token', token)
  redis.call('pexpire', KEYS[1], ARGV[2])
  return {token, 1}
end
if owner == ARGV[1] then
  local holds = redis.call('hincrby', KEYS[1], 'holds', 1)
  if redis.call('pttl', KEYS[1]) < tonumber(ARGV[2]) then
    redis.call('pexpire', KEYS[1], ARGV[2])
  end
  return {tonumber(redis.call('hget', KEYS[1], 'token')), holds}
end
return {0, redis.call('pttl', KEYS[1])}
`,
};
