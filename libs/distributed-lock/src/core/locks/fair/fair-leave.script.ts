import { type PublishCommand, defineLockScript } from '../../scripts/lock-script.js';
import { FAIR_QUEUE_LUA } from './fair-queue.lua.js';
import { FREED_LUA } from '../freed.message.js';

export interface FairLeaveArgs {
  readonly lock: string;
  readonly channel: string;
  readonly queue: string;
  readonly queueDeadlines: string;
  readonly owner: string;
  readonly publish: PublishCommand;
}

/**
 * A waiter leaves the fair queue (it timed out, was aborted, or failed). If it was first and the lock
 * is free, the channel is told, so that the next waiter does not wait for the entry to expire.
 * Replies 1 if it was queued, else 0.
 */
export const fairLeave = defineLockScript<FairLeaveArgs, number>({
  name: 'dlockFairLeave',
  guarded: true,
  keys: (a) => [a.lock, a.channel, a.queue, a.queueDeadlines],
  argv: (a) => [a.owner, a.publish],
  helpers: [FAIR_QUEUE_LUA],
  lua: `
local lock_key, channel, queue_key, deadlines_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner_id, publish = ARGV[1], ARGV[2]

drop_dead_fair_waiters(queue_key, deadlines_key)
local first = redis.call('zrange', queue_key, 0, 0)[1]
if redis.call('zrem', queue_key, owner_id) == 0 then
  redis.call('zrem', deadlines_key, owner_id)
  return 0
end
redis.call('zrem', deadlines_key, owner_id)
if first == owner_id and redis.call('exists', lock_key) == 0 and redis.call('zcard', queue_key) > 0 then
  redis.call(publish, channel, ${FREED_LUA})
end
return 1
`,
});
