import type { ExclusiveKeys } from './exclusive-keys.js';
import { type PublishCommand, defineLockScript, parseRelease, type ReleaseReply } from '../../scripts/lock-script.js';
import { GRANT_TO_LONGEST_WAITING_LUA } from './grant-to-longest-waiting.lua.js';
import { FREED_LUA } from '../freed.message.js';

export interface ExclusiveReleaseArgs extends ExclusiveKeys {
  readonly owner: string;
  readonly publish: PublishCommand;
  /** Drop every hold at once (close, giving back a grant) instead of one. */
  readonly all: boolean;
  /**
   * The holds the caller expects before this release, for a retry of a release whose outcome is
   * unknown: applied only if the lock has exactly that many (else -2: that release went through).
   */
  readonly expectedHolds: number | undefined;
  readonly grantLeaseMs: number;
  /**
   * The caller's client id when other callers of its process still wait for the lock ('' otherwise):
   * when the lock goes to another process, the caller's is marked as waiting, at the back, naming its
   * first waiting caller, `stillWaitingFirst`.
   */
  readonly stillWaitingClient: string;
  readonly stillWaitingFirst: string;
  /**
   * Publish `released` even when no process was ever marked as waiting while the lock was held: for
   * kinds whose waiters do not mark their process (the fair lock, RedLock). The plain lock's waiters
   * always do (a caller that will wait marks its process when its attempt fails), so for it a lock
   * that never had a mark has nobody to tell, and its release saves the PUBLISH.
   */
  readonly alwaysPublish: boolean;
  /**
   * The fencing token of the hold being released, when the caller knows it (every release of a lock
   * it holds): the release applies only to that lifetime of the lock, so a release Redis runs late (after
   * the owner let go and took the lock again) finds another token and changes nothing; such a call
   * needs no deadline (see `clockFree`). Undefined for clean-ups of holds the caller does not know of.
   */
  readonly token: number | undefined;
  /**
   * Give back a grant its caller did not take (see grant-to-longest-waiting): applies only while the
   * lock is still that grant, unclaimed (`granted` set: neither the caller's claim nor its own attempt
   * took it since), else -1 (nothing changed).
   */
  readonly unclaimedGrant?: boolean;
}

/**
 * Releases one hold (or all) of an exclusive lock, if the caller owns it (and, with `token`, in that
 * lifetime of the lock). Replies -1 when the caller is not the owner (nothing changed), -2 when the holds differ from the expected ones (an earlier
 * release whose reply was lost did go through: nothing changed), the holds left when still held, and
 * when the caller's last hold is gone: -3 if the lock went to the
 * first caller of the process that has waited longest (`granted:<owner>:...` on the channel), else 0: no process was marked
 * as waiting, so it was deleted and the channel says `released`, so that one waiter per process can
 * take it (the plain lock skips the message when no process was ever marked while it was held: see
 * `alwaysPublish`). (-3 tells the hand-over metrics where the lock went; for the holder it means what
 * 0 means.)
 */
export const exclusiveRelease = defineLockScript<ExclusiveReleaseArgs, ReleaseReply, number>({
  name: 'dlockExclusiveRelease',
  parse: parseRelease,
  guarded: true,
  clockFree: (a) => a.token !== undefined,
  keys: (a) => [a.lock, a.fence, a.channel],
  argv: (a) => [
    a.owner,
    a.publish,
    a.all ? 'all' : '1',
    a.expectedHolds ?? '',
    a.grantLeaseMs,
    a.stillWaitingClient,
    a.alwaysPublish ? '1' : '0',
    a.token ?? '',
    a.stillWaitingFirst,
    a.unclaimedGrant ? '1' : '0',
  ],
  helpers: [GRANT_TO_LONGEST_WAITING_LUA],
  lua: `
local lock_key, fence_key, channel = KEYS[1], KEYS[2], KEYS[3]
local owner_id, publish, count, expected_holds, grant_lease = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local still_waiting_client = ARGV[6] or ''
local always_publish = ARGV[7] == '1'
local token = ARGV[8]
local still_waiting_first = ARGV[9] or ''
local unclaimed_grant = ARGV[10] == '1'

local state = redis.call('hmget', lock_key, 'owner', 'holds', 'wseq', 'token', 'granted')
local holder, holds, anyone_marked = state[1], state[2], state[3]
if holder ~= owner_id or (token ~= '' and state[4] ~= token) or (unclaimed_grant and not state[5]) then
  return -1
end
if expected_holds ~= '' and holds ~= expected_holds then
  return -2
end
if count ~= 'all' and tonumber(holds) > 1 then
  return redis.call('hincrby', lock_key, 'holds', -1)
end
if still_waiting_client ~= '' then
  name_first(lock_key, still_waiting_client, still_waiting_first)
end
local granted = anyone_marked and grant_to_longest_waiting(lock_key, fence_key, channel, publish, grant_lease, '', owner_id)
if granted then
  if still_waiting_client ~= '' and string.sub(granted, 1, #still_waiting_client + 1) ~= still_waiting_client .. ':' then
    mark_waiting(lock_key, still_waiting_client, still_waiting_first)
  end
  return -3
end
redis.call('del', lock_key)
if anyone_marked or always_publish then
  redis.call(publish, channel, ${FREED_LUA})
end
return 0
`,
});
