import { type PublishCommand, defineLockScript } from '../../scripts/lock-script.js';
import { SEMAPHORE_LUA, semaphoreKeyList, type SemaphoreScriptArgs } from './semaphore.lua.js';

export interface SemaphoreLeaveArgs extends SemaphoreScriptArgs {
  readonly owner: string;
  readonly publish: PublishCommand;
}

/**
 * A waiter leaves the line (it timed out, was aborted, or failed). If that moves the line (it was
 * first) and the new first waiter's request fits, that waiter is told at once rather than when the
 * leaver's place would have expired. Replies 1 if it was queued, else 0.
 */
export const semaphoreLeave = defineLockScript<SemaphoreLeaveArgs, number>({
  name: 'dlockSemaphoreLeave',
  guarded: true,
  keys: semaphoreKeyList,
  argv: (a) => [a.owner, a.publish],
  helpers: [SEMAPHORE_LUA],
  lua: `
local state_key, holders_key, queue_key, deadlines_key, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[6]
local owner_id, publish = ARGV[1], ARGV[2]

local now = server_ms()
local moved = drop_dead_permit_waiters(state_key, queue_key, deadlines_key, now) > 0
local freed = drop_expired_holders(state_key, holders_key, now)
local was_first = redis.call('zrange', queue_key, 0, 0)[1] == owner_id
local left = drop_waiter(state_key, queue_key, deadlines_key, owner_id)
if was_first or freed > 0 or moved then
  wake_if_first_fits(state_key, queue_key, channel, publish)
end
return left
`,
});
