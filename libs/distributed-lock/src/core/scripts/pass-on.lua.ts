import { NEXT_TOKEN_LUA } from './next-token.lua.js';

/**
 * Lua shared by the plain lock's scripts that free a lock: `pass_on(lock, fence, channel, publish,
 * grant_lease, exclude)` grants the lock to the client that has waited longest, if any.
 *
 * Waiting clients are marked in the lock hash as `w:<client id>` = arrival number (from the `wseq`
 * counter); a client is marked while it has callers queued for the lock (see the acquire script).
 * The grant goes to a placeholder owner `<client id>:grant` (no caller ever has that owner id), with a
 * new fencing token and a short lease (`grant_lease` ms), and the channel says `grant:<client id>`:
 * only that client's first waiter acts on it, taking the lock over with its own owner id and lease
 * (the acquire script), so nobody else is woken and nobody races. A client that died or stopped
 * waiting leaves the placeholder to expire after `grant_lease`; the others' waiters, told of the
 * grant, look again by then. Returns the grant's token, or nil when no client (but `exclude`) waits.
 */
export const PASS_ON_LUA = `${NEXT_TOKEN_LUA}
local function pass_on(lock, fence, channel, publish, grant_lease, exclude)
  local fields = redis.call('hgetall', lock)
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
  local token = next_token(fence)
  redis.call('hset', lock, 'owner', next_client .. ':grant', 'holds', 1, 'token', token)
  redis.call('hdel', lock, 'w:' .. next_client)
  redis.call('pexpire', lock, grant_lease)
  redis.call(publish, channel, 'grant:' .. next_client)
  return token
end
`;
