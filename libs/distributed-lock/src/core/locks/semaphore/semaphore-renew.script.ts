import { type PublishCommand, defineLockScript, parseFlag } from '../../scripts/lock-script.js';
import { SEMAPHORE_LUA, semaphoreKeyList, type SemaphoreScriptArgs } from './semaphore.lua.js';

export interface SemaphoreRenewArgs extends SemaphoreScriptArgs {
  readonly owner: string;
  readonly leaseMs: number;
  readonly publish: PublishCommand;
}

/**
 * Lengthens one acquisition's lease: 1 if it still holds its permits, 0 if not (its lease ended
 * first: a lease that ended is over, even if nobody has taken the permits yet; they come back now,
 * and serve the line). Other holders' ended leases are left to the scripts that need their permits
 * (see SEMAPHORE_LUA): a renewal costs the clock, a ZSCORE and a ZADD.
 */
export const semaphoreRenew = defineLockScript<SemaphoreRenewArgs, boolean, number>({
  parse: parseFlag,
  name: 'dlockSemaphoreRenew',
  renewal: true,
  keys: semaphoreKeyList,
  argv: (a) => [a.owner, a.leaseMs, a.publish],
  helpers: [SEMAPHORE_LUA],
  lua: `
local state_key, holders_key, queue_key, deadlines_key, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[6]
local owner_id, lease_ms, publish = ARGV[1], tonumber(ARGV[2]), ARGV[3]

local lease_end = redis.call('zscore', holders_key, owner_id)
if not lease_end then
  return 0
end
local now = now_ms()
if tonumber(lease_end) <= now then
  local state = redis.call('hmget', state_key, 'permits', 'used')
  local used = tonumber(state[2] or '0') - sem_drop_holder(state_key, holders_key, owner_id)
  sem_serve_line(state_key, holders_key, queue_key, deadlines_key, KEYS[5], channel, publish, now, tonumber(state[1] or '0'), used, true, nil, nil)
  return 0
end
redis.call('zadd', holders_key, now + lease_ms, owner_id)
return 1
`,
});
