import { defineLockScript } from '../../scripts/lock-script.js';
import { NEXT_TOKEN_LUA } from '../../scripts/next-token.lua.js';
import type { ReadWriteAcquireArgs } from './read-acquire.script.js';
import { READ_WRITE_LUA, parseReadWriteAttempt, type WriteAttemptReply } from './read-write.lua.js';

/**
 * Takes or re-enters the write lock: granted when nobody holds anything, or to the writer again.
 * Replies {token, holds}, {0, ms until the state can change}, or {-3, 0} when the caller holds the
 * read lock (an upgrade: refused, since two readers upgrading would wait for each other forever).
 */
export const writeAcquire = defineLockScript<ReadWriteAcquireArgs, WriteAttemptReply, [number, number]>({
  parse: parseReadWriteAttempt,
  name: 'dlockWriteAcquire',
  guarded: true,
  keys: (a) => [a.hash, a.readers, a.fence],
  argv: (a) => [a.owner, a.leaseMs, a.watchdog ? '1' : '0'],
  helpers: [READ_WRITE_LUA, NEXT_TOKEN_LUA],
  lua: `
local hash_key, readers_key, fence_key = KEYS[1], KEYS[2], KEYS[3]
local owner_id, lease_ms = ARGV[1], tonumber(ARGV[2])
local renew = ARGV[3] or '0'

local now = drop_expired(hash_key, readers_key)
local writer = redis.call('hget', hash_key, 'writer')
local ends = now + lease_ms
if writer == owner_id then
  local holds = redis.call('hincrby', hash_key, 'wholds', 1)
  if renew == '1' then redis.call('hset', hash_key, 'wrenew', 1) end
  if tonumber(redis.call('hget', hash_key, 'wexp')) < ends then
    redis.call('hset', hash_key, 'wexp', ends)
  end
  settle(hash_key, readers_key, now)
  return {tonumber(redis.call('hget', hash_key, 'wtoken')), holds}
end
if writer then
  return {0, time_to_change(hash_key)}
end
if redis.call('zcard', readers_key) > 0 then
  if redis.call('zscore', readers_key, owner_id) then
    return {-3, 0}
  end
  return {0, time_to_change(hash_key)}
end
local token = next_token(fence_key)
redis.call('hset', hash_key, 'writer', owner_id, 'wholds', 1, 'wtoken', token, 'wexp', ends, 'wrenew', renew)
settle(hash_key, readers_key, now)
return {token, 1}
`,
});
