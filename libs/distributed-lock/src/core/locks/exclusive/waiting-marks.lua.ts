import { luaHelper } from '../../scripts/lua-helper.js';

/**
 * Lua shared by the plain lock's scripts: a process (client) with callers waiting for the lock is
 * marked in the lock hash, `w:<client id>` = its arrival number from the hash's `wseq` counter, so that
 * a release can grant the lock to the process that has waited longest (grant-to-longest-waiting).
 * `mark_waiting` puts a process at the back; `unmark_waiting` removes its mark.
 */
export const WAITING_MARKS_LUA = luaHelper(
  'waiting_marks',
  `
local function mark_waiting(lock_key, client)
  redis.call('hset', lock_key, 'w:' .. client, redis.call('hincrby', lock_key, 'wseq', 1))
end

local function unmark_waiting(lock_key, client)
  redis.call('hdel', lock_key, 'w:' .. client)
end
`,
);
