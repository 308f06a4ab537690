import { defineLockScript } from '../../scripts/lock-script.js';

export interface FenceRaiseArgs {
  readonly fence: string;
  readonly lock: string;
  readonly owner: string;
  readonly token: number;
}

/**
 * RedLock: after a quorum granted a lock, raise every node's fencing counter (and the lock's stored
 * token, if `owner` holds it there) to the token the quorum agreed on: the highest of theirs. Any
 * later quorum overlaps this one, so its token is higher. Replies 1.
 */
export const fenceRaise = defineLockScript<FenceRaiseArgs, number>({
  name: 'dlockFenceRaise',
  keys: (a) => [a.fence, a.lock],
  argv: (a) => [a.owner, a.token],
  lua: `
local fence_key, lock_key = KEYS[1], KEYS[2]
local owner_id, token = ARGV[1], ARGV[2]

if tonumber(redis.call('get', fence_key) or '0') < tonumber(token) then
  redis.call('set', fence_key, token)
end
if redis.call('hget', lock_key, 'owner') == owner_id then
  redis.call('hset', lock_key, 'token', token)
end
return 1
`,
});
