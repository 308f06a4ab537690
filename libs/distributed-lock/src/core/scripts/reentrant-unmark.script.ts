import type { LockScript } from './lock-script.js';
import { PASS_ON_LUA } from './pass-on.lua.js';

/**
 * The last caller of a client stopped waiting for a lock without getting it (timeout, abort), or a
 * grant came for a client that no longer waits: the client's waiting mark goes, and a grant to it
 * (placeholder owner `<client>:grant`) is passed on to the next waiting client, or the lock freed.
 * KEYS[1] lock hash; KEYS[2] channel; KEYS[3] fencing counter.
 * ARGV[1] client id; ARGV[2] publish command; ARGV[3] lease ms of a grant (see pass-on).
 * Returns 1 when a grant to the client was passed on, else 0.
 */
export const REENTRANT_UNMARK_SCRIPT: LockScript = {
  name: 'dlockReentrantUnmark',
  numberOfKeys: 3,
  lua: `${PASS_ON_LUA}
redis.call('hdel', KEYS[1], 'w:' .. ARGV[1])
if redis.call('hget', KEYS[1], 'owner') ~= ARGV[1] .. ':grant' then
  return 0
end
if not pass_on(KEYS[1], KEYS[3], KEYS[2], ARGV[2], ARGV[3], ARGV[1]) then
  redis.call('del', KEYS[1])
  redis.call(ARGV[2], KEYS[2], 'released')
end
return 1
`,
};
