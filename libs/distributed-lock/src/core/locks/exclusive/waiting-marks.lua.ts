import { luaHelper } from '../../scripts/lua-helper.js';

/**
 * Lua shared by the plain lock's scripts: a process (client) with callers waiting for the lock is
 * marked in the lock hash, `w:<client id>` = `<arrival number>:<owner id of its first waiting caller>`
 * (the number from the hash's `wseq` counter), so that a release can grant the lock to that caller of
 * the process that has waited longest (grant-to-longest-waiting).
 *
 * - `mark_waiting(lock_key, client, first)` puts a process at the back, naming its first caller.
 * - `name_first(lock_key, client, first)` names another first caller, keeping the process's place (its
 *   first caller took the lock, or left): a no-op when the process is not marked.
 * - `unmark_waiting(lock_key, client)` removes its mark.
 * - `read_mark(value)` returns a mark's arrival number and first caller (nil for a mark an older
 *   version wrote: its arrival number alone).
 */
export const WAITING_MARKS_LUA = luaHelper(
  'waiting_marks',
  `
local function mark_waiting(lock_key, client, first)
  redis.call('hset', lock_key, 'w:' .. client, redis.call('hincrby', lock_key, 'wseq', 1) .. ':' .. first)
end

local function read_mark(value)
  local colon = string.find(value, ':', 1, true)
  if not colon then return tonumber(value), nil end
  return tonumber(string.sub(value, 1, colon - 1)), string.sub(value, colon + 1)
end

local function name_first(lock_key, client, first)
  local mark = redis.call('hget', lock_key, 'w:' .. client)
  if mark then
    local seq = read_mark(mark)
    redis.call('hset', lock_key, 'w:' .. client, seq .. ':' .. first)
  end
end

local function unmark_waiting(lock_key, client)
  redis.call('hdel', lock_key, 'w:' .. client)
end
`,
);
