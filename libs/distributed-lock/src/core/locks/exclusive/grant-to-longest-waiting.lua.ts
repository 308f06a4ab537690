import { luaHelper } from '../../scripts/lua-helper.js';
import { NEXT_TOKEN_LUA } from '../../scripts/next-token.lua.js';
import { grantedMessageLua } from '../granted.message.js';
import { WAITING_MARKS_LUA } from './waiting-marks.lua.js';

/**
 * Lua shared by the plain lock's scripts that free a lock (release, hand-over):
 * `grant_to_longest_waiting(lock_key, fence_key, channel, publish, grant_lease, exclude, releaser)`
 * grants the lock to the first caller of the process (client) that has waited longest, other than
 * `exclude`, if any; never back to `releaser` (a mark that still names the caller releasing it, written
 * by an attempt of its process sent before that caller took the lock, is passed over).
 *
 * Waiting processes are marked in the lock hash (see waiting-marks.lua.ts), each naming its first
 * waiting caller. The lock becomes that caller's (its owner id, one hold, a new fencing token, and
 * `granted` = 1 until it is claimed) with a short lease (`grant_lease` ms, ending at the time the message gives: PEXPIREAT), the process's mark goes, and the channel says
 * `granted:<owner>:<token>:<lease end>`: the caller holds the lock from the message on, with no round
 * trip of its own, and claims it with its own lease in the background (a renewal). Nobody else can take
 * it (it is that caller's, not its process's), and nobody else is woken: the other processes' waiters
 * look again once the grant would have expired, in case it is never claimed. A caller that left
 * meanwhile is told by its process, which gives the grant back by its token (see LockLine). Returns the
 * owner granted, or nil when no process (but `exclude`) waits.
 */
export const GRANT_TO_LONGEST_WAITING_LUA = luaHelper(
  'grant_to_longest_waiting',
  `
local function grant_to_longest_waiting(lock_key, fence_key, channel, publish, grant_lease, exclude, releaser)
  local fields = redis.call('hgetall', lock_key)
  local next_client, next_seq, next_owner = nil, nil, nil
  for i = 1, #fields, 2 do
    local field = fields[i]
    if string.sub(field, 1, 2) == 'w:' then
      local client = string.sub(field, 3)
      local seq, first = read_mark(fields[i + 1])
      if client ~= exclude and first ~= releaser and (next_seq == nil or seq < next_seq) then
        next_client, next_seq, next_owner = client, seq, first
      end
    end
  end
  if next_client == nil then
    return nil
  end
  local token = next_token(fence_key)
  unmark_waiting(lock_key, next_client)
  local lease_end = now_ms() + tonumber(grant_lease)
  if next_owner == nil then
    -- A process of an older version (its mark names no caller): granted to it the way it expects.
    next_owner = next_client .. ':grant'
    redis.call('hset', lock_key, 'owner', next_owner, 'holds', 1, 'token', token, 'renew', 0)
    redis.call('pexpireat', lock_key, lease_end)
    redis.call(publish, channel, 'grant:' .. next_client)
    return next_owner
  end
  redis.call('hset', lock_key, 'owner', next_owner, 'holds', 1, 'token', token, 'renew', 0, 'granted', 1)
  redis.call('pexpireat', lock_key, lease_end)
  redis.call(publish, channel, ${grantedMessageLua('next_owner', 'token', 'lease_end')})
  return next_owner
end
`,
  [NEXT_TOKEN_LUA, WAITING_MARKS_LUA],
);
