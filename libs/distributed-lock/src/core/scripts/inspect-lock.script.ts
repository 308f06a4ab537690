import { defineLockScript } from './lock-script.js';

/** Every key of one lock name, in its slot: the plain, fair and read-write locks and the fence. */
export interface InspectLockArgs {
  readonly plain: string;
  readonly fence: string;
  readonly fair: string;
  readonly fairQueue: string;
  readonly fairQueueDeadlines: string;
  readonly readWrite: string;
  readonly readers: string;
}

/** An exclusive lock hash: {owner, holds, token, renew, pttl, [client, arrival, ...]}, or {} when there is none. */
export type ExclusiveState = [] | [string | null, string | null, string | null, string | null, number, string[]];
/** A holder of a read-write lock: {owner, holds, token, renew, ms left}. */
export type ReadWriteHolderState = [string, string | null, string | null, string | null, number];
/** {now (server ms), fence counter, plain, fair, fair queue [owner, ms left, ...], read-write {writer, readers}}. */
export type InspectLockReply = [
  number,
  string | null,
  ExclusiveState,
  ExclusiveState,
  (string | number)[],
  [] | [[] | ReadWriteHolderState, ReadWriteHolderState[]],
];

/**
 * Reads everything Redis keeps about one lock name, without changing anything, in one step (so the
 * holder, the waiters and the readers are of one instant): the plain lock's hash with its waiting
 * marks (`w:<client>` = arrival number), the fair lock's hash and its live queue, the read-write
 * lock's writer and live readers, and the fencing counter. Tokens and holds are returned as the
 * strings Redis stores (never through Lua numbers, which print 15 digits); times as integers.
 */
export const inspectLock = defineLockScript<InspectLockArgs, InspectLockReply>({
  name: 'dlockInspect',
  keys: (a) => [a.plain, a.fence, a.fair, a.fairQueue, a.fairQueueDeadlines, a.readWrite, a.readers],
  argv: () => [],
  lua: `
local plain_key, fence_key, fair_key, queue_key, deadlines_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local rw_key, readers_key = KEYS[6], KEYS[7]

local function server_ms()
  local clock = redis.call('time')
  return tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
end

local function hash_table(key)
  local fields = redis.call('hgetall', key)
  local state = {}
  for i = 1, #fields, 2 do
    state[fields[i]] = fields[i + 1]
  end
  return state, #fields
end

local function exclusive(lock_key)
  local state, count = hash_table(lock_key)
  if count == 0 then
    return {}
  end
  local marks = {}
  for field, value in pairs(state) do
    if string.sub(field, 1, 2) == 'w:' then
      marks[#marks + 1] = string.sub(field, 3)
      marks[#marks + 1] = value
    end
  end
  return {state['owner'] or false, state['holds'] or false, state['token'] or false, state['renew'] or false, redis.call('pttl', lock_key), marks}
end

local function fair_queue(now)
  local entries = redis.call('zrange', queue_key, 0, -1)
  local live = {}
  for _, owner in ipairs(entries) do
    local deadline = redis.call('zscore', deadlines_key, owner)
    if deadline and tonumber(deadline) > now then
      live[#live + 1] = owner
      live[#live + 1] = tonumber(deadline) - now
    end
  end
  return live
end

local function read_write(now)
  local state, count = hash_table(rw_key)
  if count == 0 then
    return {}
  end
  local writer = {}
  if state['writer'] and tonumber(state['wexp']) > now then
    writer = {state['writer'], state['wholds'] or false, state['wtoken'] or false, state['wrenew'] or false, tonumber(state['wexp']) - now}
  end
  local readers = {}
  local entries = redis.call('zrangebyscore', readers_key, '(' .. now, '+inf', 'WITHSCORES')
  for i = 1, #entries, 2 do
    local owner = entries[i]
    local holds, token, renew = state['r:' .. owner] or false, state['t:' .. owner] or false, state['d:' .. owner] or false
    readers[#readers + 1] = {owner, holds, token, renew, tonumber(entries[i + 1]) - now}
  end
  return {writer, readers}
end

local now = server_ms()
return {now, redis.call('get', fence_key), exclusive(plain_key), exclusive(fair_key), fair_queue(now), read_write(now)}
`,
});
