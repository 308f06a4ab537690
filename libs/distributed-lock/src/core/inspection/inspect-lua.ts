import { luaHelper } from '../scripts/lua-helper.js';

/*
 * Lua shared by the kinds' parts of the inspection script (see KindInspection): ways of reading a
 * hash, a line with deadlines, and a set of lease ends that several kinds keep. Read-only.
 */

/** `server_ms()`: the server's clock in ms. */
export const SERVER_MS_LUA = luaHelper(
  'server_ms',
  `
local function server_ms()
  local clock = redis.call('time')
  return tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
end
`,
);

/** `hash_table(key)`: a hash as a Lua table of its fields, or nil when it does not exist. */
export const HASH_TABLE_LUA = luaHelper(
  'hash_table',
  `
local function hash_table(key)
  local fields = redis.call('hgetall', key)
  if #fields == 0 then return nil end
  local state = {}
  for i = 1, #fields, 2 do
    state[fields[i]] = fields[i + 1]
  end
  return state
end
`,
);

/**
 * `live_queue(line_key, line_deadlines_key, now)`: a line (sorted set, first to be served first) whose
 * members' places expire (a sorted set of deadlines, server ms): the live ones, `{owner, ms left, ...}`.
 */
export const LIVE_QUEUE_LUA = luaHelper(
  'live_queue',
  `
local function live_queue(line_key, line_deadlines_key, now)
  local entries = redis.call('zrange', line_key, 0, -1)
  local live = {}
  for _, owner in ipairs(entries) do
    local deadline = redis.call('zscore', line_deadlines_key, owner)
    if deadline and tonumber(deadline) > now then
      live[#live + 1] = owner
      live[#live + 1] = tonumber(deadline) - now
    end
  end
  return live
end
`,
);

/** `live_until(zset_key, now)`: the members of a sorted set of lease ends (server ms) whose lease still runs, each `{member, ms left}`. */
export const LIVE_UNTIL_LUA = luaHelper(
  'live_until',
  `
local function live_until(zset_key, now)
  local entries = redis.call('zrangebyscore', zset_key, '(' .. now, '+inf', 'WITHSCORES')
  local live = {}
  for i = 1, #entries, 2 do
    live[#live + 1] = {entries[i], tonumber(entries[i + 1]) - now}
  end
  return live
end
`,
);
