import { type PublishCommand, defineLockScript, parseRelease, type ReleaseReply } from '../../scripts/lock-script.js';
import { SEMAPHORE_LUA, semaphoreKeyList, type SemaphoreScriptArgs } from './semaphore.lua.js';

export interface SemaphoreReleaseArgs extends SemaphoreScriptArgs {
  readonly owner: string;
  readonly publish: PublishCommand;
}

/**
 * Gives back the permits of one acquisition. Replies 0 when released, -1 when this acquisition holds
 * nothing (released before, or its lease ended: its permits came back, or come back now). Idempotent,
 * so a release whose reply was lost can be retried; and harmless when Redis runs it late (owner ids are
 * new per acquisition, so it can only ever drop what its own acquisition held): not guarded. What it
 * frees serves the line (sem_serve_line). The common case costs a ZSCORE, the clock, an HMGET (with the
 * waiting count: 0, so the line is not looked at), a ZREM, an HDEL and the HSET of the permits in use.
 */
export const semaphoreRelease = defineLockScript<SemaphoreReleaseArgs, ReleaseReply, number>({
  parse: parseRelease,
  name: 'dlockSemaphoreRelease',
  keys: semaphoreKeyList,
  argv: (a) => [a.owner, a.publish],
  helpers: [SEMAPHORE_LUA],
  lua: `
local state_key, holders_key, queue_key, deadlines_key, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[6]
local owner_id, publish = ARGV[1], ARGV[2]

local lease_end = redis.call('zscore', holders_key, owner_id)
if not lease_end then
  return -1
end
local now = now_ms()
local state = redis.call('hmget', state_key, 'h:' .. owner_id, 'permits', 'used', 'q')
redis.call('zrem', holders_key, owner_id)
local used = tonumber(state[3] or '0')
if state[1] then
  redis.call('hdel', state_key, 'h:' .. owner_id, 'd:' .. owner_id)
  used = used - tonumber(string.match(state[1], '^%d+'))
end
sem_serve_line(state_key, holders_key, queue_key, deadlines_key, KEYS[5], channel, publish, now, tonumber(state[2] or '0'), used, true, nil, state[4] or '0')
if tonumber(lease_end) <= now then
  return -1
end
return 0
`,
});
