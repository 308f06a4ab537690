import { luaHelper } from '../../scripts/lua-helper.js';
import { NEXT_TOKEN_LUA } from '../../scripts/next-token.lua.js';
import { WAITING_MARKS_LUA } from './waiting-marks.lua.js';
import { grantMessageLua } from './exclusive.messages.js';

/**
 * Lua shared by the plain lock's scripts that free a lock (release, hand-over, withdraw):
 * `grant_to_longest_waiting(lock_key, fence_key, channel, publish, grant_lease, exclude)` grants the
 * lock to the process (client) that has waited longest, other than `exclude`, if any.
 *
 * Waiting processes are marked in the lock hash as `w:<client id>` = arrival number (from the `wseq`
 * counter); a process is marked while it has callers queued for the lock (see the acquire script).
 * The grant goes to a placeholder owner `<client id>:grant` (no caller ever has that owner id), with a
 * new fencing token and a short lease (`grant_lease` ms), and the channel says `grant:<client id>`:
 * only that process's first waiter acts on it, taking the lock over with its own owner id and lease
 * (the acquire script), so nobody else is woken and nobody races. A process that died or stopped
 * waiting leaves the placeholder to expire after `grant_lease`; the others' waiters, told of the
 * grant, look again by then. Returns the grant's token, or nil when no process (but `exclude`) waits.
 */
export const GRANT_TO_LONGEST_WAITING_LUA = luaHelper(
  'grant_to_longest_waiting',
  `
local function grant_to_longest_waiting(lock_key, fence_key, channel, publish, grant_lease, exclude)
  local fields = redis.call('hgetall', lock_key)
  local next_client, next_seq = nil, nil
  for i = 1, #fields, 2 do
    local field = fields[i]
    if string.sub(field, 1, 2) == 'w:' then
      local client = string.sub(field, 3)
      local seq = tonumber(fields[i + 1])
      if client ~= exclude and (next_seq == nil or seq < next_seq) then
        next_client, next_seq = client, seq
      end
    end
  end
  if next_client == nil then
    return nil
  end
  local token = next_token(fence_key)
  redis.call('hset', lock_key, 'owner', next_client .. ':grant', 'holds', 1, 'token', token, 'renew', 0)
  redis.call('hdel', lock_key, 'w:' .. next_client)
  redis.call('pexpire', lock_key, grant_lease)
  redis.call(publish, channel, ${grantMessageLua('next_client')})
  return token
end
`,
  [NEXT_TOKEN_LUA, WAITING_MARKS_LUA],
);
