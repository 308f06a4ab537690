import { luaHelper } from '../../scripts/lua-helper.js';
/**
 * Lua shared by the fair lock's scripts: `drop_dead_fair_waiters(queue_key, deadlines_key)` returns the
 * server's time in ms and first removes the queued waiters whose entry was not refreshed in time.
 * The queue is a sorted set (score = arrival ticket); the deadlines, a sorted set (score = server ms
 * after which the entry counts as dead).
 */
export const FAIR_QUEUE_LUA = luaHelper(
  'fair_queue',
  `
local function drop_dead_fair_waiters(queue_key, deadlines_key)
  local clock = redis.call('time')
  local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
  local dead = redis.call('zrangebyscore', deadlines_key, '-inf', now)
  for _, waiter in ipairs(dead) do
    redis.call('zrem', queue_key, waiter)
    redis.call('zrem', deadlines_key, waiter)
  end
  return now
end
`,
);
