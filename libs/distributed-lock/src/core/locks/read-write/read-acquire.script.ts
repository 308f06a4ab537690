import { defineLockScript } from '../../scripts/lock-script.js';
import { NEXT_TOKEN_LUA } from '../../scripts/next-token.lua.js';
import { READ_WRITE_LUA, type ReadWriteKeys, parseReadWriteAttempt, type WriteAttemptReply } from './read-write.lua.js';

export interface ReadWriteAcquireArgs extends ReadWriteKeys {
  readonly fence: string;
  readonly owner: string;
  readonly leaseMs: number;
  /** The watchdog renews the hold: recorded (reader `d:<owner>`, writer `wrenew`), for inspection. */
  readonly watchdog: boolean;
}

/**
 * Takes or re-enters the read lock: granted unless another owner writes; the writer itself may also
 * read (downgrade). Replies {token, holds} or {0, ms until the lock's state can change}.
 */
export const readAcquire = defineLockScript<ReadWriteAcquireArgs, WriteAttemptReply, [number, number]>({
  parse: parseReadWriteAttempt,
  name: 'dlockReadAcquire',
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
if writer and writer ~= owner_id then
  return {0, time_to_change(hash_key)}
end
local holds = redis.call('hincrby', hash_key, 'r:' .. owner_id, 1)
local token
if holds == 1 then
  token = next_token(fence_key)
  redis.call('hset', hash_key, 't:' .. owner_id, token, 'd:' .. owner_id, renew)
else
  token = tonumber(redis.call('hget', hash_key, 't:' .. owner_id))
  if renew == '1' then redis.call('hset', hash_key, 'd:' .. owner_id, 1) end
end
local ends = now + lease_ms
local current = redis.call('zscore', readers_key, owner_id)
if current == false or tonumber(current) < ends then
  redis.call('zadd', readers_key, ends, owner_id)
end
settle(hash_key, readers_key, now)
return {token, holds}
`,
});
