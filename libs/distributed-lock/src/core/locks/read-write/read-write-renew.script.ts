import { defineLockScript, parseFlag } from '../../scripts/lock-script.js';
import { READ_WRITE_LUA, type ReadWriteKeys } from './read-write.lua.js';

export interface ReadWriteRenewArgs extends ReadWriteKeys {
  readonly owner: string;
  readonly leaseMs: number;
}

/** Watchdog renewal of a read hold. Replies 1 if renewed, 0 if not held. */
export const readRenew = defineLockScript<ReadWriteRenewArgs, boolean, number>({
  parse: parseFlag,
  name: 'dlockReadRenew',
  renewal: true,
  keys: (a) => [a.hash, a.readers],
  argv: (a) => [a.owner, a.leaseMs],
  helpers: [READ_WRITE_LUA],
  lua: `
local hash_key, readers_key = KEYS[1], KEYS[2]
local owner_id, lease_ms = ARGV[1], tonumber(ARGV[2])

local now = drop_expired(hash_key, readers_key)
if redis.call('hexists', hash_key, 'r:' .. owner_id) == 0 then
  return 0
end
local ends = now + lease_ms
if tonumber(redis.call('zscore', readers_key, owner_id)) < ends then
  redis.call('zadd', readers_key, ends, owner_id)
end
settle(hash_key, readers_key, now)
return 1
`,
});

/** Watchdog renewal of the write hold. Replies 1 if renewed, 0 if not held. */
export const writeRenew = defineLockScript<ReadWriteRenewArgs, boolean, number>({
  parse: parseFlag,
  name: 'dlockWriteRenew',
  renewal: true,
  keys: (a) => [a.hash, a.readers],
  argv: (a) => [a.owner, a.leaseMs],
  helpers: [READ_WRITE_LUA],
  lua: `
local hash_key, readers_key = KEYS[1], KEYS[2]
local owner_id, lease_ms = ARGV[1], tonumber(ARGV[2])

local now = drop_expired(hash_key, readers_key)
if redis.call('hget', hash_key, 'writer') ~= owner_id then
  return 0
end
local ends = now + lease_ms
if tonumber(redis.call('hget', hash_key, 'wexp')) < ends then
  redis.call('hset', hash_key, 'wexp', ends)
end
settle(hash_key, readers_key, now)
return 1
`,
});
