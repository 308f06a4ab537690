import type { LockScript } from './lock-script.js';

/**
 * Deletes a lock whoever holds it (administrative use) and wakes a waiter.
 * KEYS[1] lock key; KEYS[2] unlock channel. ARGV[1] publish command.
 * Returns 1 when a lock was deleted, 0 when there was none.
 */
export const FORCE_UNLOCK_SCRIPT: LockScript = {
  name: 'dlockForceUnlock',
  numberOfKeys: 2,
  lua: `
if redis.call('del', KEYS[1]) == 1 then
  redis.call(ARGV[1], KEYS[2], 'released')
  return 1
end
return 0
`,
};
