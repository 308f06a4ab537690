import type { LockScript } from './lock-script.js';
import { NEXT_TOKEN_LUA } from './next-token.lua.js';

/*
 * A read-write lock is one hash and one sorted set, in the lock's slot:
 *   KEYS[1] hash: writer, wholds, wtoken, wexp (the writer's lease end, server ms), and per reader
 *           r:<owner> (holds) and t:<owner> (its fencing token);
 *   KEYS[2] sorted set of readers, score = the reader's lease end (server ms).
 * Every script first drops the readers and the writer whose lease ended (so one reader's renewals
 * never keep a dead reader in), and finally sets both keys to expire with the latest lease, or
 * deletes them when nobody holds anything.
 */
const PRELUDE = `
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expired = redis.call('zrangebyscore', KEYS[2], '-inf', now)
for _, reader in ipairs(expired) do
  redis.call('hdel', KEYS[1], 'r:' .. reader, 't:' .. reader)
  redis.call('zrem', KEYS[2], reader)
end
local wexp = redis.call('hget', KEYS[1], 'wexp')
if wexp and tonumber(wexp) <= now then
  redis.call('hdel', KEYS[1], 'writer', 'wholds', 'wtoken', 'wexp')
end
local function settle()
  local last = redis.call('zrange', KEYS[2], -1, -1, 'WITHSCORES')
  local ends = 0
  if #last > 0 then ends = tonumber(last[2]) end
  local w = redis.call('hget', KEYS[1], 'wexp')
  if w then ends = math.max(ends, tonumber(w)) end
  if ends <= now then
    redis.call('del', KEYS[1], KEYS[2])
    return
  end
  redis.call('pexpire', KEYS[1], ends - now)
  if #last > 0 then redis.call('pexpire', KEYS[2], ends - now) end
end
local function ttl()
  local left = redis.call('pttl', KEYS[1])
  if left < 0 then return 1 end
  return left
end
`;

/**
 * Takes or re-enters the read lock. KEYS[3] fencing counter. ARGV[1] owner; ARGV[2] lease ms.
 * Granted unless another owner writes; the writer itself may also read (downgrade). Returns
 * {token, holds} or {0, ms until the lock's state can change}.
 */
export const READ_ACQUIRE_SCRIPT: LockScript = {
  name: 'dlockReadAcquire',
  numberOfKeys: 3,
  lua: `${PRELUDE}${NEXT_TOKEN_LUA}
local writer = redis.call('hget', KEYS[1], 'writer')
if writer and writer ~= ARGV[1] then
  return {0, ttl()}
end
local holds = redis.call('hincrby', KEYS[1], 'r:' .. ARGV[1], 1)
local token
if holds == 1 then
  token = next_token(KEYS[3])
  redis.call('hset', KEYS[1], 't:' .. ARGV[1], token)
else
  token = tonumber(redis.call('hget', KEYS[1], 't:' .. ARGV[1]))
end
local ends = now + tonumber(ARGV[2])
local current = redis.call('zscore', KEYS[2], ARGV[1])
if current == false or tonumber(current) < ends then
  redis.call('zadd', KEYS[2], ends, ARGV[1])
end
settle()
return {token, holds}
`,
};

/**
 * Takes or re-enters the write lock. KEYS[3] fencing counter. ARGV[1] owner; ARGV[2] lease ms.
 * Granted when nobody holds anything, or to the writer again. Returns {token, holds}, {0, ms until the
 * state can change}, or {-3, 0} when the caller holds the read lock (an upgrade: refused, since two
 * readers upgrading would wait for each other forever).
 */
export const WRITE_ACQUIRE_SCRIPT: LockScript = {
  name: 'dlockWriteAcquire',
  numberOfKeys: 3,
  lua: `${PRELUDE}${NEXT_TOKEN_LUA}
local writer = redis.call('hget', KEYS[1], 'writer')
local ends = now + tonumber(ARGV[2])
if writer == ARGV[1] then
  local holds = redis.call('hincrby', KEYS[1], 'wholds', 1)
  if tonumber(redis.call('hget', KEYS[1], 'wexp')) < ends then
    redis.call('hset', KEYS[1], 'wexp', ends)
  end
  settle()
  return {tonumber(redis.call('hget', KEYS[1], 'wtoken')), holds}
end
if writer then
  return {0, ttl()}
end
if redis.call('zcard', KEYS[2]) > 0 then
  if redis.call('zscore', KEYS[2], ARGV[1]) then
    return {-3, 0}
  end
  return {0, ttl()}
end
local token = next_token(KEYS[3])
redis.call('hset', KEYS[1], 'writer', ARGV[1], 'wholds', 1, 'wtoken', token, 'wexp', ends)
settle()
return {token, 1}
`,
};

/** Watchdog renewal of a read hold. ARGV[1] owner; ARGV[2] lease ms. Returns 1 if renewed, 0 if not held. */
export const READ_RENEW_SCRIPT: LockScript = {
  name: 'dlockReadRenew',
  numberOfKeys: 2,
  lua: `${PRELUDE}
if redis.call('hexists', KEYS[1], 'r:' .. ARGV[1]) == 0 then
  return 0
end
local ends = now + tonumber(ARGV[2])
if tonumber(redis.call('zscore', KEYS[2], ARGV[1])) < ends then
  redis.call('zadd', KEYS[2], ends, ARGV[1])
end
settle()
return 1
`,
};

/** Watchdog renewal of the write hold. ARGV[1] owner; ARGV[2] lease ms. Returns 1 if renewed, 0 if not held. */
export const WRITE_RENEW_SCRIPT: LockScript = {
  name: 'dlockWriteRenew',
  numberOfKeys: 2,
  lua: `${PRELUDE}
if redis.call('hget', KEYS[1], 'writer') ~= ARGV[1] then
  return 0
end
local ends = now + tonumber(ARGV[2])
if tonumber(redis.call('hget', KEYS[1], 'wexp')) < ends then
  redis.call('hset', KEYS[1], 'wexp', ends)
end
settle()
return 1
`,
};

/**
 * Releases one read hold (or all: ARGV[3] = 'all'). KEYS[3] channel. ARGV[1] owner; ARGV[2] publish
 * command; ARGV[4] expected holds or '' (see the plain lock's release). Returns -1 (not held), -2
 * (holds differ: an earlier release went through), or the holds left. When the last reader leaves,
 * the channel is told, so that a writer can go.
 */
export const READ_RELEASE_SCRIPT: LockScript = {
  name: 'dlockReadRelease',
  numberOfKeys: 3,
  lua: `${PRELUDE}
local field = 'r:' .. ARGV[1]
local holds = redis.call('hget', KEYS[1], field)
if holds == false then
  settle()
  return -1
end
if ARGV[4] ~= '' and holds ~= ARGV[4] then
  return -2
end
if ARGV[3] ~= 'all' and tonumber(holds) > 1 then
  return redis.call('hincrby', KEYS[1], field, -1)
end
redis.call('hdel', KEYS[1], field, 't:' .. ARGV[1])
redis.call('zrem', KEYS[2], ARGV[1])
if redis.call('zcard', KEYS[2]) == 0 then
  redis.call(ARGV[2], KEYS[3], 'released')
end
settle()
return 0
`,
};

/**
 * Releases one write hold (or all). Same arguments and replies as the read release. When the writer
 * is gone the channel is told: readers (all of them) or a writer can go.
 */
export const WRITE_RELEASE_SCRIPT: LockScript = {
  name: 'dlockWriteRelease',
  numberOfKeys: 3,
  lua: `${PRELUDE}
if redis.call('hget', KEYS[1], 'writer') ~= ARGV[1] then
  settle()
  return -1
end
local holds = redis.call('hget', KEYS[1], 'wholds')
if ARGV[4] ~= '' and holds ~= ARGV[4] then
  return -2
end
if ARGV[3] ~= 'all' and tonumber(holds) > 1 then
  return redis.call('hincrby', KEYS[1], 'wholds', -1)
end
redis.call('hdel', KEYS[1], 'writer', 'wholds', 'wtoken', 'wexp')
redis.call(ARGV[2], KEYS[3], 'released')
settle()
return 0
`,
};

/** Sets an owner's read (ARGV[2] = 'read') or write holds to ARGV[3] if it holds that side. Returns 1 or 0. */
export const READ_WRITE_ADJUST_SCRIPT: LockScript = {
  name: 'dlockReadWriteAdjust',
  numberOfKeys: 2,
  lua: `${PRELUDE}
if ARGV[2] == 'read' then
  if redis.call('hexists', KEYS[1], 'r:' .. ARGV[1]) == 0 then return 0 end
  redis.call('hset', KEYS[1], 'r:' .. ARGV[1], ARGV[3])
  return 1
end
if redis.call('hget', KEYS[1], 'writer') ~= ARGV[1] then return 0 end
redis.call('hset', KEYS[1], 'wholds', ARGV[3])
return 1
`,
};

/**
 * The lock's state as of now, without changing it: {writer holds (0: no writer), live readers, ms
 * until everything expires (-2: nothing), the caller's read holds, the caller's write holds}.
 * ARGV[1] owner (or '').
 */
export const READ_WRITE_STATE_SCRIPT: LockScript = {
  name: 'dlockReadWriteState',
  numberOfKeys: 2,
  lua: `
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local fields = redis.call('hmget', KEYS[1], 'writer', 'wholds', 'wexp', 'r:' .. ARGV[1])
local writerAlive = fields[1] and tonumber(fields[3]) > now
local wholds = 0
local mine = 0
if writerAlive then
  wholds = tonumber(fields[2])
  if fields[1] == ARGV[1] then mine = wholds end
end
local readers = redis.call('zcount', KEYS[2], '(' .. now, '+inf')
local myRead = 0
local myEnd = redis.call('zscore', KEYS[2], ARGV[1])
if fields[4] and myEnd and tonumber(myEnd) > now then myRead = tonumber(fields[4]) end
return {wholds, readers, redis.call('pttl', KEYS[1]), myRead, mine}
`,
};

/** Deletes the whole read-write lock whoever holds it. KEYS[3] channel; ARGV[1] publish command. Returns 1 if there was one. */
export const READ_WRITE_FORCE_UNLOCK_SCRIPT: LockScript = {
  name: 'dlockReadWriteForceUnlock',
  numberOfKeys: 3,
  lua: `
if redis.call('del', KEYS[1], KEYS[2]) > 0 then
  redis.call(ARGV[1], KEYS[3], 'released')
  return 1
end
return 0
`,
};
