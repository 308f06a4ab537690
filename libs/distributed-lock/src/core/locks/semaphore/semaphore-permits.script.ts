import { type PublishCommand, defineLockScript } from '../../scripts/lock-script.js';
import { SEMAPHORE_LUA, semaphoreKeyList, type SemaphoreScriptArgs } from './semaphore.lua.js';

/** `read`: nothing changes; `try-set`: set the size if none is stored; `set`: set it; `add`: add to it (may be negative). */
export type SemaphorePermitsOperation = 'read' | 'try-set' | 'set' | 'add';

export interface SemaphorePermitsArgs extends SemaphoreScriptArgs {
  readonly operation: SemaphorePermitsOperation;
  readonly value: number;
  /** The size stored if none is stored yet, for every operation but `try-set`. */
  readonly initialPermits: number;
  readonly publish: PublishCommand;
}

/**
 * Reads or changes a semaphore's size (Redisson's availablePermits, trySetPermits, setPermits,
 * addPermits). Replies {outcome, size, free, queued}: outcome 1 when done, 0 when `try-set` found a
 * size already stored, -1 when `add` would take the size below zero (nothing changed). Free permits
 * may be negative for a while after the size was lowered below what holders have. A change that
 * makes room for the first waiter wakes it; one that makes its request impossible (larger than the
 * new size) wakes it too, so that it is refused at once rather than holding up the line.
 */
/** What a permits operation came to: its outcome (1/0; addPermits: -1 when refused), the size, the free permits, the queue length. */
export interface SemaphorePermitsReply {
  readonly outcome: number;
  readonly size: number;
  readonly free: number;
  readonly queued: number;
}

export const semaphorePermits = defineLockScript<SemaphorePermitsArgs, SemaphorePermitsReply, [number, number, number, number]>({
  parse: ([outcome, size, free, queued]) => ({ outcome, size, free, queued }),
  name: 'dlockSemaphorePermits',
  keys: semaphoreKeyList,
  argv: (a) => [a.operation, a.value, a.initialPermits, a.publish],
  helpers: [SEMAPHORE_LUA],
  lua: `
local state_key, holders_key, queue_key, deadlines_key, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[6]
local operation, value, initial_permits, publish = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]

local now = now_ms()
sem_drop_dead_waiters(state_key, queue_key, deadlines_key, now)
local freed = sem_drop_expired_holders(state_key, holders_key, now)
local state = redis.call('hmget', state_key, 'permits', 'used')
local used = tonumber(state[2] or '0') - freed
local stored = state[1]
local outcome = 1
if operation == 'try-set' then
  if stored then
    outcome = 0
  else
    stored = ARGV[2]
    redis.call('hset', state_key, 'permits', stored)
  end
else
  if not stored then
    stored = initial_permits
    redis.call('hset', state_key, 'permits', stored)
  end
  if operation == 'set' then
    stored = ARGV[2]
    redis.call('hset', state_key, 'permits', stored)
  elseif operation == 'add' then
    if tonumber(stored) + value < 0 then
      outcome = -1
    else
      stored = redis.call('hincrby', state_key, 'permits', value)
    end
  end
end

local size = tonumber(stored or initial_permits)
if (outcome == 1 and operation ~= 'read') or freed > 0 then
  used = select(2, sem_serve_line(state_key, holders_key, queue_key, deadlines_key, KEYS[5], channel, publish, now, size, used, freed > 0, nil, nil))
end
return {outcome, size, size - used, redis.call('zcard', queue_key)}
`,
});
