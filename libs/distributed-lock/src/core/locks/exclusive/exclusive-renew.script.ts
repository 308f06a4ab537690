import { defineLockScript, parseFlag } from '../../scripts/lock-script.js';

export interface ExclusiveRenewArgs {
  readonly lock: string;
  readonly owner: string;
  readonly leaseMs: number;
}

/**
 * Watchdog renewal: lengthens the lease if the owner still holds the lock. Replies 1 when renewed, 0
 * when gone or someone else's. It is also the claim of a plain lock granted to a waiting caller (see
 * grant-to-longest-waiting): the grant's `granted` flag goes.
 */
export const exclusiveRenew = defineLockScript<ExclusiveRenewArgs, boolean, number>({
  name: 'dlockExclusiveRenew',
  renewal: true,
  parse: parseFlag,
  keys: (a) => [a.lock],
  argv: (a) => [a.owner, a.leaseMs],
  lua: `
local lock_key = KEYS[1]
local owner_id, lease_ms = ARGV[1], ARGV[2]

local state = redis.call('hmget', lock_key, 'owner', 'granted')
if state[1] ~= owner_id then
  return 0
end
if redis.call('pttl', lock_key) < tonumber(lease_ms) then
  redis.call('pexpire', lock_key, lease_ms)
end
if state[2] then redis.call('hdel', lock_key, 'granted') end
return 1
`,
});
