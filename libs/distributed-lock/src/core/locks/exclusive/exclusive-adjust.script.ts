import { defineLockScript } from '../../scripts/lock-script.js';

export interface ExclusiveAdjustArgs {
  readonly lock: string;
  readonly owner: string;
  readonly holds: number;
}

/**
 * Sets the holds of the owner's lock to what its process knows it holds. Used when a grant reports
 * more holds than that: an earlier grant whose reply was lost (connection dropped, failover) left a
 * phantom hold that no code would ever release. Replies 1 if adjusted, 0 if the owner does not hold it.
 */
export const exclusiveAdjust = defineLockScript<ExclusiveAdjustArgs, number>({
  name: 'dlockExclusiveAdjust',
  guarded: true,
  keys: (a) => [a.lock],
  argv: (a) => [a.owner, a.holds],
  lua: `
local lock_key = KEYS[1]
local owner_id, holds = ARGV[1], ARGV[2]

if redis.call('hget', lock_key, 'owner') ~= owner_id then
  return 0
end
redis.call('hset', lock_key, 'holds', holds)
return 1
`,
});
