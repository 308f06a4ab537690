import type { ExclusiveKeys } from '../exclusive/exclusive-keys.js';
import { type PublishCommand, defineLockScript } from '../../scripts/lock-script.js';
import { GRANT_TO_LONGEST_WAITING_LUA } from '../exclusive/grant-to-longest-waiting.lua.js';
import { FREED_LUA } from '../freed.message.js';

export interface ReentrantWithdrawArgs extends ExclusiveKeys {
  readonly client: string;
  /** The caller that stopped waiting last. */
  readonly owner: string;
  readonly publish: PublishCommand;
  readonly grantLeaseMs: number;
}

/**
 * A process withdraws from the processes waiting for a lock: its last caller (`owner`) stopped waiting
 * without the lock (timeout, abort). Its waiting mark goes, and a grant to that caller its process did
 * not hear of in time (see grant-to-longest-waiting; unclaimed) is passed on to the next waiting
 * process, or the lock freed. Replies 1 when a grant was passed on, else 0.
 */
export const reentrantWithdraw = defineLockScript<ReentrantWithdrawArgs, number>({
  name: 'dlockReentrantWithdraw',
  guarded: true,
  keys: (a) => [a.lock, a.fence, a.channel],
  argv: (a) => [a.client, a.owner, a.publish, a.grantLeaseMs],
  helpers: [GRANT_TO_LONGEST_WAITING_LUA],
  lua: `
local lock_key, fence_key, channel = KEYS[1], KEYS[2], KEYS[3]
local client, owner_id, publish, grant_lease = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

unmark_waiting(lock_key, client)
local state = redis.call('hmget', lock_key, 'owner', 'granted')
if state[1] ~= owner_id or not state[2] then
  return 0
end
if not grant_to_longest_waiting(lock_key, fence_key, channel, publish, grant_lease, client, owner_id) then
  redis.call('del', lock_key)
  redis.call(publish, channel, ${FREED_LUA})
end
return 1
`,
});
