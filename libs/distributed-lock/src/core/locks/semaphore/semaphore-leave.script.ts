import { type PublishCommand, defineLockScript } from '../../scripts/lock-script.js';
import { SEMAPHORE_LUA, semaphoreKeyList, type SemaphoreScriptArgs } from './semaphore.lua.js';

export interface SemaphoreLeaveArgs extends SemaphoreScriptArgs {
  readonly owner: string;
  readonly publish: PublishCommand;
}

/**
 * An acquisition that ended without its permits (it timed out, was aborted, or failed) leaves the
 * line, and gives back what may have been granted to it meanwhile (an attempt whose reply it did not
 * wait for). If that moves the line (it was first) or frees permits, the line is served at once rather
 * than when the leaver's place would have expired. Replies 1 if it was queued, else 0. Not guarded:
 * owner ids are new per acquisition, so run late it only drops what is that acquisition's.
 */
export const semaphoreLeave = defineLockScript<SemaphoreLeaveArgs, number>({
  name: 'dlockSemaphoreLeave',
  keys: semaphoreKeyList,
  argv: (a) => [a.owner, a.publish],
  helpers: [SEMAPHORE_LUA],
  lua: `
local state_key, holders_key, queue_key, deadlines_key, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[6]
local owner_id, publish = ARGV[1], ARGV[2]

local was_first = redis.call('zrange', queue_key, 0, 0)[1] == owner_id
local left = sem_drop_waiter(state_key, queue_key, deadlines_key, owner_id)
local state = redis.call('hmget', state_key, 'h:' .. owner_id, 'permits', 'used')
local used = tonumber(state[3] or '0')
if state[1] then
  used = used - sem_drop_holder(state_key, holders_key, owner_id)
end
if was_first or state[1] then
  sem_serve_line(state_key, holders_key, queue_key, deadlines_key, KEYS[5], channel, publish, now_ms(), tonumber(state[2] or '0'), used, state[1] ~= false, nil, nil)
end
return left
`,
});
