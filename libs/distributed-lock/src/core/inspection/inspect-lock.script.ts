import { defineLockScript } from '../scripts/lock-script.js';

/** Every key of one lock name, in its slot: the plain, fair and read-write locks, the semaphore and the fence. */
export interface InspectLockArgs {
  readonly plain: string;
  readonly fence: string;
  readonly fair: string;
  readonly fairQueue: string;
  readonly fairQueueDeadlines: string;
  readonly readWrite: string;
  readonly readers: string;
  readonly semaphore: string;
  readonly semaphoreHolders: string;
  readonly semaphoreQueue: string;
  readonly semaphoreQueueDeadlines: string;
}

/** An exclusive lock hash: {owner, holds, token, renew, pttl, [client, arrival, ...]}, or {} when there is none. */
export type ExclusiveState = [] | [string | null, string | null, string | null, string | null, number, string[]];
/** A holder of a read-write lock: {owner, holds, token, renew, ms left}. */
export type ReadWriteHolderState = [string, string | null, string | null, string | null, number];
/** A semaphore acquisition: {owner, permits, token, renew, ms left}. */
export type SemaphoreHolderState = [string, string, string, string | null, number];
/** A live queue, first to be served first: [owner, ms until its place expires, ...]. */
export type QueueState = (string | number)[];
/** A semaphore: {size, live holders, live queue, permits each queued waiter asks for (in queue order)}, or {} when it was never used. */
export type SemaphoreState = [] | [string | null, SemaphoreHolderState[], QueueState, string[]];
/** {now (server ms), fence counter, plain, fair, fair queue, read-write {writer, readers}, semaphore}. */
export type InspectLockReply = [
  number,
  string | null,
  ExclusiveState,
  ExclusiveState,
  QueueState,
  [] | [[] | ReadWriteHolderState, ReadWriteHolderState[]],
  SemaphoreState,
];

/**
 * Reads everything Redis keeps about one lock name, without changing anything, in one step (so the
 * holder, the waiters and the readers are of one instant): the plain lock's hash with its waiting
 * marks (`w:<client>` = arrival number), the fair lock's hash and its live queue, the read-write
 * lock's writer and live readers, the semaphore's size, live holders and live line, and the fencing
 * counter. Tokens and holds are returned as the
 * strings Redis stores (never through Lua numbers, which print 15 digits); times as integers.
 */
export const inspectLock = defineLockScript<InspectLockArgs, InspectLockReply>({
  name: 'dlockInspect',
  keys: (a) => [
    a.plain,
    a.fence,
    a.fair,
    a.fairQueue,
    a.fairQueueDeadlines,
    a.readWrite,
    a.readers,
    a.semaphore,
    a.semaphoreHolders,
    a.semaphoreQueue,
    a.semaphoreQueueDeadlines,
  ],
  argv: () => [],
  lua: `
local plain_key, fence_key, fair_key, queue_key, deadlines_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local rw_key, readers_key = KEYS[6], KEYS[7]
local semaphore_key, semaphore_holders_key, semaphore_queue_key, semaphore_deadlines_key = KEYS[8], KEYS[9], KEYS[10], KEYS[11]

local function server_ms()
  local clock = redis.call('time')
  return tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
end

local function hash_table(key)
  local fields = redis.call('hgetall', key)
  if #fields == 0 then return nil end
  local state = {}
  for i = 1, #fields, 2 do
    state[fields[i]] = fields[i + 1]
  end
  return state
end

local function exclusive(lock_key)
  local state = hash_table(lock_key)
  if not state then return {} end
  local marks = {}
  for field, value in pairs(state) do
    if string.sub(field, 1, 2) == 'w:' then
      marks[#marks + 1] = string.sub(field, 3)
      marks[#marks + 1] = value
    end
  end
  return {state['owner'] or false, state['holds'] or false, state['token'] or false, state['renew'] or false, redis.call('pttl', lock_key), marks}
end

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

-- The members of a sorted set of lease ends (server ms) whose lease still runs at now, each with its ms left.
local function live_until(zset_key, now)
  local entries = redis.call('zrangebyscore', zset_key, '(' .. now, '+inf', 'WITHSCORES')
  local live = {}
  for i = 1, #entries, 2 do
    live[#live + 1] = {entries[i], tonumber(entries[i + 1]) - now}
  end
  return live
end

local function read_write(now)
  local state = hash_table(rw_key)
  if not state then return {} end
  local writer = {}
  if state['writer'] and tonumber(state['wexp']) > now then
    writer = {state['writer'], state['wholds'] or false, state['wtoken'] or false, state['wrenew'] or false, tonumber(state['wexp']) - now}
  end
  local readers = {}
  for _, live in ipairs(live_until(readers_key, now)) do
    local owner = live[1]
    local holds, token, renew = state['r:' .. owner] or false, state['t:' .. owner] or false, state['d:' .. owner] or false
    readers[#readers + 1] = {owner, holds, token, renew, live[2]}
  end
  return {writer, readers}
end

local function semaphore(now)
  local state = hash_table(semaphore_key)
  if not state then return {} end
  local holders = {}
  for _, live in ipairs(live_until(semaphore_holders_key, now)) do
    local held = state['h:' .. live[1]]
    if held then
      local permits, token = string.match(held, '^(%d+):(%d+)$')
      holders[#holders + 1] = {live[1], permits, token, state['d:' .. live[1]] or false, live[2]}
    end
  end
  local line = live_queue(semaphore_queue_key, semaphore_deadlines_key, now)
  local wants = {}
  for i = 1, #line, 2 do
    wants[#wants + 1] = state['w:' .. line[i]] or '1'
  end
  return {state['permits'] or false, holders, line, wants}
end

local now = server_ms()
return {
  now,
  redis.call('get', fence_key),
  exclusive(plain_key),
  exclusive(fair_key),
  live_queue(queue_key, deadlines_key, now),
  read_write(now),
  semaphore(now),
}
`,
});
