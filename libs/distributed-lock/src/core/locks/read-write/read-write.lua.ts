import { parseAttempt, type AttemptReply } from '../../scripts/lock-script.js';
import { luaHelper } from '../../scripts/lua-helper.js';

/**
 * Lua shared by the read-write lock's scripts. The lock is one hash and one sorted set, in the lock's
 * slot: the hash holds writer, wholds, wtoken, wexp (the writer's lease end, server ms), wrenew (1
 * when its watchdog renews it: for inspection), and per reader r:<owner> (holds), t:<owner> (its
 * fencing token) and d:<owner> (1 when its watchdog renews it); the sorted set, the readers, score =
 * the reader's lease end (server ms).
 *
 * - `drop_expired(hash_key, readers_key)`: the server's time in ms, after dropping the readers and the
 *   writer whose lease ended (so one reader's renewals never keep a dead reader in). Every script
 *   starts with it.
 * - `settle(hash_key, readers_key, now)`: both keys expire with the latest lease, or are deleted when
 *   nobody holds anything. Scripts that change the lock end with it.
 * - `time_to_change(hash_key)`: ms until the lock's state can change (at least 1).
 */
export const READ_WRITE_LUA = luaHelper(
  'read_write',
  `
local function drop_expired(hash_key, readers_key)
  local clock = redis.call('time')
  local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
  local expired = redis.call('zrangebyscore', readers_key, '-inf', now)
  for _, reader in ipairs(expired) do
    redis.call('hdel', hash_key, 'r:' .. reader, 't:' .. reader, 'd:' .. reader)
    redis.call('zrem', readers_key, reader)
  end
  local writer_ends = redis.call('hget', hash_key, 'wexp')
  if writer_ends and tonumber(writer_ends) <= now then
    redis.call('hdel', hash_key, 'writer', 'wholds', 'wtoken', 'wexp', 'wrenew')
  end
  return now
end

local function settle(hash_key, readers_key, now)
  local last = redis.call('zrange', readers_key, -1, -1, 'WITHSCORES')
  local ends = 0
  if #last > 0 then ends = tonumber(last[2]) end
  local writer_ends = redis.call('hget', hash_key, 'wexp')
  if writer_ends then ends = math.max(ends, tonumber(writer_ends)) end
  if ends <= now then
    redis.call('del', hash_key, readers_key)
    return
  end
  redis.call('pexpire', hash_key, ends - now)
  if #last > 0 then redis.call('pexpire', readers_key, ends - now) end
end

local function time_to_change(hash_key)
  local left = redis.call('pttl', hash_key)
  if left < 0 then return 1 end
  return left
end
`,
);

/** The keys of one read-write lock. */
export interface ReadWriteKeys {
  readonly hash: string;
  readonly readers: string;
}

/** A read-write attempt's reply: an attempt's, or a refused upgrade ({-3, 0}: the write lock asked for while holding the read lock). */
export type WriteAttemptReply = AttemptReply | { readonly acquired: false; readonly upgradeRefused: true };

export function parseReadWriteAttempt(raw: [number, number]): WriteAttemptReply {
  return raw[0] === -3 ? { acquired: false, upgradeRefused: true } : parseAttempt(raw);
}
