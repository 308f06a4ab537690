import { type PublishCommand, defineLockScript, parseFlag } from '../../scripts/lock-script.js';
import { SEMAPHORE_LUA, semaphoreKeyList, type SemaphoreScriptArgs } from './semaphore.lua.js';

export interface SemaphoreRenewArgs extends SemaphoreScriptArgs {
  readonly owner: string;
  readonly leaseMs: number;
  readonly publish: PublishCommand;
}

/**
 * Lengthens one acquisition's lease: 1 if it still holds its permits, 0 if not (its lease ended
 * first: a lease that ended is over, even if nobody has taken the permits yet). Leases that ended
 * are dropped on the way, and the first waiter told if that made room: a crashed holder's permits come back
 * at the next renewal of anyone's lease, if no other call notices first.
 */
export const semaphoreRenew = defineLockScript<SemaphoreRenewArgs, boolean, number>({
  parse: parseFlag,
  name: 'dlockSemaphoreRenew',
  keys: semaphoreKeyList,
  argv: (a) => [a.owner, a.leaseMs, a.publish],
  helpers: [SEMAPHORE_LUA],
  lua: `
local state_key, holders_key, queue_key, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[6]
local owner_id, lease_ms, publish = ARGV[1], tonumber(ARGV[2]), ARGV[3]

local now = server_ms()
if drop_expired_holders(state_key, holders_key, now) > 0 then
  wake_if_first_fits(state_key, queue_key, channel, publish)
end
if redis.call('hexists', state_key, 'h:' .. owner_id) == 0 then
  return 0
end
redis.call('zadd', holders_key, now + lease_ms, owner_id)
return 1
`,
});
