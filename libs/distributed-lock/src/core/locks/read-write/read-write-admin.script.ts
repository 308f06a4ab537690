import { type PublishCommand, defineLockScript, parseFlag } from '../../scripts/lock-script.js';
import { READ_WRITE_LUA, type ReadWriteKeys } from './read-write.lua.js';
import { FREED_LUA } from '../freed.message.js';

export interface ReadWriteAdjustArgs extends ReadWriteKeys {
  readonly owner: string;
  readonly side: 'read' | 'write';
  readonly holds: number;
}

/** Sets an owner's read or write holds if it holds that side (corrects phantom holds). Replies 1 or 0. */
export const readWriteAdjust = defineLockScript<ReadWriteAdjustArgs, number>({
  name: 'dlockReadWriteAdjust',
  guarded: true,
  keys: (a) => [a.hash, a.readers],
  argv: (a) => [a.owner, a.side, a.holds],
  helpers: [READ_WRITE_LUA],
  lua: `
local hash_key, readers_key = KEYS[1], KEYS[2]
local owner_id, side, holds = ARGV[1], ARGV[2], ARGV[3]

drop_expired(hash_key, readers_key)
if side == 'read' then
  if redis.call('hexists', hash_key, 'r:' .. owner_id) == 0 then return 0 end
  redis.call('hset', hash_key, 'r:' .. owner_id, holds)
  return 1
end
if redis.call('hget', hash_key, 'writer') ~= owner_id then return 0 end
redis.call('hset', hash_key, 'wholds', holds)
return 1
`,
});

export interface ReadWriteStateArgs extends ReadWriteKeys {
  /** Whose holds to count ('' for nobody's). */
  readonly owner: string;
}

/**
 * The lock's state as of now, without changing it: {writer holds (0: no writer), live readers, ms
 * until everything expires (-2: nothing), the owner's read holds, the owner's write holds}.
 */
/** A read-write lock's state as one script reads it (see readWriteState). */
export interface ReadWriteState {
  readonly writerHolds: number;
  readonly readers: number;
  /** ms until everything expires (-2: nobody holds it). */
  readonly ttl: number;
  /** The asking owner's holds of each side. */
  readonly ownerReadHolds: number;
  readonly ownerWriteHolds: number;
}

export const readWriteState = defineLockScript<ReadWriteStateArgs, ReadWriteState, [number, number, number, number, number]>({
  parse: ([writerHolds, readers, ttl, ownerReadHolds, ownerWriteHolds]) => ({ writerHolds, readers, ttl, ownerReadHolds, ownerWriteHolds }),
  name: 'dlockReadWriteState',
  keys: (a) => [a.hash, a.readers],
  argv: (a) => [a.owner],
  lua: `
local hash_key, readers_key = KEYS[1], KEYS[2]
local owner_id = ARGV[1]

local clock = redis.call('time')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local fields = redis.call('hmget', hash_key, 'writer', 'wholds', 'wexp', 'r:' .. owner_id)
local writer, writer_holds, writer_ends, reader_holds = fields[1], fields[2], fields[3], fields[4]
local writer_alive = writer and tonumber(writer_ends) > now
local wholds = 0
local my_write = 0
if writer_alive then
  wholds = tonumber(writer_holds)
  if writer == owner_id then my_write = wholds end
end
local readers = redis.call('zcount', readers_key, '(' .. now, '+inf')
local my_read = 0
local my_end = redis.call('zscore', readers_key, owner_id)
if reader_holds and my_end and tonumber(my_end) > now then my_read = tonumber(reader_holds) end
return {wholds, readers, redis.call('pttl', hash_key), my_read, my_write}
`,
});

export interface ReadWriteForceUnlockArgs extends ReadWriteKeys {
  readonly channel: string;
  readonly publish: PublishCommand;
}

/** Deletes the whole read-write lock whoever holds it. Replies 1 if there was one. */
export const readWriteForceUnlock = defineLockScript<ReadWriteForceUnlockArgs, boolean, number>({
  parse: parseFlag,
  name: 'dlockReadWriteForceUnlock',
  keys: (a) => [a.hash, a.readers, a.channel],
  argv: (a) => [a.publish],
  lua: `
local hash_key, readers_key, channel = KEYS[1], KEYS[2], KEYS[3]
local publish = ARGV[1]

if redis.call('del', hash_key, readers_key) > 0 then
  redis.call(publish, channel, ${FREED_LUA})
  return 1
end
return 0
`,
});
