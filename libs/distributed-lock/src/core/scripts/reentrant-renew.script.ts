import type { LockScript } from './lock-script.js';

/**
 * Watchdog renewal: lengthens the lease to ARGV[2] ms if ARGV[1] still owns the lock.
 * KEYS[1] lock hash. Returns 1 when renewed, 0 when the lock is gone or owned by someone else.
 */
export const REENTRANT_RENEW_SCRIPT: LockScript = {
  name: 'dlockReentrantRenew',
  numberOfKeys: 1,
  lua: `
if redis.call('hget', KEYS[1], 'owner') ~= ARGV[1] then
  return 0
end
if redis.call('pttl', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('pexpire', KEYS[1], ARGV[2])
end
return 1
`,
};
