import { type PublishCommand, defineLockScript, parseRelease, type ReleaseReply } from '../../scripts/lock-script.js';
import { READ_WRITE_LUA, type ReadWriteKeys } from './read-write.lua.js';
import { FREED_LUA } from '../freed.message.js';

export interface ReadWriteReleaseArgs extends ReadWriteKeys {
  readonly channel: string;
  readonly owner: string;
  readonly publish: PublishCommand;
  readonly all: boolean;
  /** For a retry of a release whose outcome is unknown (see the plain lock's release). */
  readonly expectedHolds: number | undefined;
  /**
   * The fencing token of the hold being released, when the caller knows it: a release that finds the
   * owner holding under another token (its lease ran out, and it took the lock again) changes nothing.
   */
  readonly token: number | undefined;
}

const argv = (a: ReadWriteReleaseArgs): (string | number)[] => [a.owner, a.publish, a.all ? 'all' : '1', a.expectedHolds ?? '', a.token ?? ''];

/**
 * Releases one read hold (or all). Replies -1 (not held, or not under `token`), -2 (holds differ: an earlier release went
 * through), or the holds left. When the last reader leaves, the channel is told, so that a writer can go.
 */
export const readRelease = defineLockScript<ReadWriteReleaseArgs, ReleaseReply, number>({
  parse: parseRelease,
  name: 'dlockReadRelease',
  guarded: true,
  keys: (a) => [a.hash, a.readers, a.channel],
  argv,
  helpers: [READ_WRITE_LUA],
  lua: `
local hash_key, readers_key, channel = KEYS[1], KEYS[2], KEYS[3]
local owner_id, publish, count, expected_holds, token = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]

local now = drop_expired(hash_key, readers_key)
local field = 'r:' .. owner_id
local holds = redis.call('hget', hash_key, field)
if holds == false or (token ~= '' and redis.call('hget', hash_key, 't:' .. owner_id) ~= token) then
  settle(hash_key, readers_key, now)
  return -1
end
if expected_holds ~= '' and holds ~= expected_holds then
  return -2
end
if count ~= 'all' and tonumber(holds) > 1 then
  return redis.call('hincrby', hash_key, field, -1)
end
redis.call('hdel', hash_key, field, 't:' .. owner_id, 'd:' .. owner_id)
redis.call('zrem', readers_key, owner_id)
if redis.call('zcard', readers_key) == 0 then
  redis.call(publish, channel, ${FREED_LUA})
end
settle(hash_key, readers_key, now)
return 0
`,
});

/**
 * Releases one write hold (or all). Same replies as the read release. When the writer is gone the
 * channel is told: readers (all of them) or a writer can go.
 */
export const writeRelease = defineLockScript<ReadWriteReleaseArgs, ReleaseReply, number>({
  parse: parseRelease,
  name: 'dlockWriteRelease',
  guarded: true,
  keys: (a) => [a.hash, a.readers, a.channel],
  argv,
  helpers: [READ_WRITE_LUA],
  lua: `
local hash_key, readers_key, channel = KEYS[1], KEYS[2], KEYS[3]
local owner_id, publish, count, expected_holds, token = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]

local now = drop_expired(hash_key, readers_key)
if redis.call('hget', hash_key, 'writer') ~= owner_id or (token ~= '' and redis.call('hget', hash_key, 'wtoken') ~= token) then
  settle(hash_key, readers_key, now)
  return -1
end
local holds = redis.call('hget', hash_key, 'wholds')
if expected_holds ~= '' and holds ~= expected_holds then
  return -2
end
if count ~= 'all' and tonumber(holds) > 1 then
  return redis.call('hincrby', hash_key, 'wholds', -1)
end
redis.call('hdel', hash_key, 'writer', 'wholds', 'wtoken', 'wexp', 'wrenew')
redis.call(publish, channel, ${FREED_LUA})
settle(hash_key, readers_key, now)
return 0
`,
});
