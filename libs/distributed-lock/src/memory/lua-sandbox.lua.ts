/**
 * Lua run once in the in-memory store's Lua state, to build what a script sees in Redis 7.0.
 * Called with the bridge's JavaScript functions; returns the globals table (the runner puts KEYS and
 * ARGV in it before each run), the environment scripts run in, and the error handler runs use.
 *
 * - `redis.call` raises `{err = message}` on an error reply, `redis.pcall` returns it (both are the
 *   bridge's JavaScript, so a script's line is on the stack when it fails); `pcall` turns
 *   such a table into its message, as Redis 7.0's own pcall does. `status_reply`, `error_reply`,
 *   `sha1hex`, `log` (ignored) and the LOG_ and REPL_ constants as in Redis.
 * - Globals and the libraries are read-only, and reading a global that does not exist is an error,
 *   with Redis' messages; so no script can leave state behind for the next one.
 * - Lua 5.1 as Redis has it, on the VM's Lua 5.4: `unpack`, `table.getn`, `math.pow`, `math.atan2`,
 *   `math.log10`, `_VERSION`, and `tostring` of a number with 5.1's `%.14g` (5.4 writes an integral
 *   float as `5.0`). No io, os, package, debug, load or require, as in Redis.
 */
export const LUA_SANDBOX = `
local raw_call, raw_pcall, raw_sha1hex = ...
local base_error, base_pcall, base_tostring = error, pcall, tostring
local getinfo, format, pack, unpack = debug.getinfo, string.format, table.pack, table.unpack

local function readonly(t)
  return setmetatable({}, {
    __index = t,
    __newindex = function() base_error('Attempt to modify a readonly table', 2) end,
    __metatable = false,
  })
end

local function with(t, extra)
  local copy = {}
  for k, v in pairs(t) do copy[k] = v end
  for k, v in pairs(extra) do copy[k] = v end
  return copy
end

local redis = {
  call = raw_call,
  pcall = raw_pcall,
  status_reply = function(status) return {ok = status} end,
  error_reply = function(message) return {err = message} end,
  sha1hex = raw_sha1hex,
  log = function() end,
  set_repl = function() end,
  replicate_commands = function() return true end,
  LOG_DEBUG = 0, LOG_VERBOSE = 1, LOG_NOTICE = 2, LOG_WARNING = 3,
  REPL_NONE = 0, REPL_AOF = 1, REPL_SLAVE = 2, REPL_REPLICA = 2, REPL_ALL = 3,
}

local function redis_pcall(...)
  local result = pack(base_pcall(...))
  if not result[1] and type(result[2]) == 'table' then
    local err = result[2].err
    if type(err) == 'string' or type(err) == 'number' then result[2] = err end
  end
  return unpack(result, 1, result.n)
end

local function tostring51(value)
  if type(value) == 'number' then return format('%.14g', value) end
  return base_tostring(value)
end

local globals = {
  assert = assert, error = base_error, getmetatable = getmetatable, ipairs = ipairs, next = next,
  pairs = pairs, pcall = redis_pcall, rawequal = rawequal, rawget = rawget, rawset = rawset,
  select = select, setmetatable = setmetatable, tonumber = tonumber, tostring = tostring51,
  type = type, unpack = unpack, xpcall = xpcall, print = function() end, _VERSION = 'Lua 5.1',
  string = readonly(string),
  table = readonly(with(table, {getn = function(t) return #t end})),
  math = readonly(with(math, {
    pow = function(x, y) return x ^ y end,
    atan2 = function(y, x) return math.atan(y, x) end,
    log10 = function(x) return math.log(x, 10) end,
  })),
  coroutine = readonly(coroutine),
  redis = readonly(redis),
}

local env = setmetatable({}, {
  __index = function(_, name)
    local value = globals[name]
    if value == nil then
      base_error("Script attempted to access nonexistent global variable '" .. base_tostring(name) .. "'", 2)
    end
    return value
  end,
  __newindex = function() base_error('Attempt to modify a readonly table', 2) end,
  __metatable = false,
})
globals._G = env

-- The error of a failed run, with the script line it came from: an error reply raised by
-- redis.call (or any {err = ...} table) keeps its message; any other error becomes 'ERR <message>'.
local function on_error(e)
  local line = -1
  for level = 2, 100 do
    local info = getinfo(level, 'Sl')
    if info == nil then break end
    if info.source == '@user_script' and info.currentline > 0 then
      line = info.currentline
      break
    end
  end
  if type(e) == 'table' and type(rawget(e, 'err')) == 'string' then
    return {err = rawget(e, 'err'), line = line}
  end
  return {err = 'ERR ' .. base_tostring(e), line = line}
end

return globals, env, on_error
`;
