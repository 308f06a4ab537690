import { luaHelper } from '../../scripts/lua-helper.js';

/**
 * Lua shared by the exclusive-hash kinds' acquire scripts (plain and fair lock): one more hold for the
 * owner already holding the lock. The token stays; the lease is only ever lengthened, so an inner short
 * lease cannot cut the outer one short; `renew` '1' (a watchdog re-entry) records that the holder's
 * watchdog renews it. Returns the acquire scripts' reply, {token, holds}.
 */
export const REENTER_LUA = luaHelper(
  'reenter',
  `
local function reenter(lock_key, lease_ms, renew)
  local holds = redis.call('hincrby', lock_key, 'holds', 1)
  if renew == '1' then
    redis.call('hset', lock_key, 'renew', 1)
  end
  if redis.call('pttl', lock_key) < tonumber(lease_ms) then
    redis.call('pexpire', lock_key, lease_ms)
  end
  return {tonumber(redis.call('hget', lock_key, 'token')), holds}
end
`,
);
