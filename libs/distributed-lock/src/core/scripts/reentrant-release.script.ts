import type { LockScript } from './lock-script.js';

/**
 * Releases one hold (or all holds with ARGV[3] = 'all') of an exclusive lock, if the caller owns it.
 * KEYS[1] lock hash; KEYS[2] unlock channel.
 * ARGV[1] owner id; ARGV[2] publish command ('publish' or 'spublish'); ARGV[3] '1' or 'all'.
 * Returns -1 when the caller is not the owner (nothing changed), the holds left when still held,
 * 0 when the lock was deleted, in which case the channel is told so that one waiter can take it.
 */
export const REENTRANT_RELEASE_SCRIPT: LockScript = {
  name: 'dlockReentrantRelease',
  numberOfKeys: 2,
  lua: `
if redis.call('hget', KEYS[1], 'owner') ~= ARGV[1] then
  return -1
end
if ARGV[3] ~= 'all' then
  local holds = redis.call('hincrby', KEYS[1], 'holds', -1)
  if holds > 0 then
    return holds
  end
end
redis.call('del', KEYS[1])
redis.call(ARGV[2], KEYS[2], 'released')
return 0
`,
};
