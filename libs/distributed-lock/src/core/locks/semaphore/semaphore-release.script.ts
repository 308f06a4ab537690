import { type PublishCommand, defineLockScript, parseRelease, type ReleaseReply } from '../../scripts/lock-script.js';
import { SEMAPHORE_LUA, semaphoreKeyList, type SemaphoreScriptArgs } from './semaphore.lua.js';

export interface SemaphoreReleaseArgs extends SemaphoreScriptArgs {
  readonly owner: string;
  readonly publish: PublishCommand;
}

/**
 * Gives back the permits of one acquisition. Replies 0 when released, -1 when this acquisition holds
 * nothing (released before, or its lease ended: its permits came back on their own). Idempotent, so a
 * release whose reply was lost can be retried. If what is free now fits the first waiter's request,
 * that waiter is told.
 */
export const semaphoreRelease = defineLockScript<SemaphoreReleaseArgs, ReleaseReply, number>({
  parse: parseRelease,
  name: 'dlockSemaphoreRelease',
  guarded: true,
  keys: semaphoreKeyList,
  argv: (a) => [a.owner, a.publish],
  helpers: [SEMAPHORE_LUA],
  lua: `
local state_key, holders_key, queue_key, deadlines_key, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[6]
local owner_id, publish = ARGV[1], ARGV[2]

local now = server_ms()
drop_dead_permit_waiters(state_key, queue_key, deadlines_key, now)
drop_expired_holders(state_key, holders_key, now)
local released = drop_holder(state_key, holders_key, owner_id)
wake_if_first_fits(state_key, queue_key, channel, publish)
if released == 0 then
  return -1
end
return 0
`,
});
