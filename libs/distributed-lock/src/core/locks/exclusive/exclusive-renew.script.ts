import { defineLockScript, parseFlag } from '../../scripts/lock-script.js';

export interface ExclusiveRenewArgs {
  readonly lock: string;
  readonly owner: string;
  readonly leaseMs: number;
}

/** Watchdog renewal: lengthens the lease if the owner still holds the lock. Replies 1 when renewed, 0 when gone or someone else's. */
export const exclusiveRenew = defineLockScript<ExclusiveRenewArgs, boolean, number>({
  name: 'dlockExclusiveRenew',
  renewal: true,
  parse: parseFlag,
  keys: (a) => [a.lock],
  argv: (a) => [a.owner, a.leaseMs],
  lua: `
local lock_key = KEYS[1]
local owner_id, lease_ms = ARGV[1], ARGV[2]

if redis.call('hget', lock_key, 'owner') ~= owner_id then
  return 0
end
if redis.call('pttl', lock_key) < tonumber(lease_ms) then
  redis.call('pexpire', lock_key, lease_ms)
end
return 1
`,
});
