import type { LockScript } from './lock-script.js';
import { NEXT_TOKEN_LUA } from './next-token.lua.js';

/**
 * Takes or re-enters an exclusive lock.
 * KEYS[1] lock hash {owner, holds, token, wseq, w:<client>...}; KEYS[2] fencing counter (same slot
 * through the hash tag).
 * ARGV[1] owner id; ARGV[2] lease ms; ARGV[3] the caller's client id when it will wait ('' or absent
 * otherwise: RedLock, tryLock without wait); ARGV[4], for a caller queued in its process: '1' when
 * other callers of the same client still wait for this lock after it, '0' when it is the last one;
 * '' for a caller not queued (its first attempt).
 * Returns {token, holds} when acquired, {0, pttl} when another owner holds it.
 *
 * - A first acquisition draws a new fencing token (next-token: a counter with the server clock as floor); a reentrant one returns the same
 *   token and only ever lengthens the lease, so an inner short lease cannot cut the outer one short.
 * - A lock granted to the caller's client (placeholder owner `<client>:grant`, see pass-on) is taken
 *   over: the caller becomes the owner with its lease, keeping the grant's token.
 * - A caller that will wait and fails marks its client as waiting (`w:<client>` = arrival number)
 *   unless it is already marked: the lock's next release grants it to the client marked first. A
 *   caller that gets the lock while others of its client still wait marks the client again, at the
 *   back (round robin between processes); the last one removes the mark. A first attempt that
 *   succeeds leaves marks alone (its client has nobody queued, so it has no mark).
 */
export const REENTRANT_ACQUIRE_SCRIPT: LockScript = {
  name: 'dlockReentrantAcquire',
  numberOfKeys: 2,
  lua: `${NEXT_TOKEN_LUA}
local client = ARGV[3] or ''
local owner = redis.call('hget', KEYS[1], 'owner')
if owner == false or (client ~= '' and owner == client .. ':grant') then
  local token
  if owner == false then
    token = next_token(KEYS[2])
  else
    token = tonumber(redis.call('hget', KEYS[1], 'token'))
  end
  redis.call('hset', KEYS[1], 'owner', ARGV[1], 'holds', 1, 'token', token)
  redis.call('pexpire', KEYS[1], ARGV[2])
  if client ~= '' and ARGV[4] == '1' then
    redis.call('hset', KEYS[1], 'w:' .. client, redis.call('hincrby', KEYS[1], 'wseq', 1))
  elseif client ~= '' and ARGV[4] == '0' then
    redis.call('hdel', KEYS[1], 'w:' .. client)
  end
  return {token, 1}
end
if owner == ARGV[1] then
  if client ~= '' and ARGV[4] == '0' then
    redis.call('hdel', KEYS[1], 'w:' .. client)
  end
  local holds = redis.call('hincrby', KEYS[1], 'holds', 1)
  if redis.call('pttl', KEYS[1]) < tonumber(ARGV[2]) then
    redis.call('pexpire', KEYS[1], ARGV[2])
  end
  return {tonumber(redis.call('hget', KEYS[1], 'token')), holds}
end
if client ~= '' and redis.call('hexists', KEYS[1], 'w:' .. client) == 0 then
  redis.call('hset', KEYS[1], 'w:' .. client, redis.call('hincrby', KEYS[1], 'wseq', 1))
end
return {0, redis.call('pttl', KEYS[1])}
`,
};
