import { type PublishCommand, defineLockScript, parseFlag } from '../../scripts/lock-script.js';
import { FREED_LUA } from '../freed.message.js';

export interface ForceUnlockArgs {
  readonly lock: string;
  readonly channel: string;
  readonly publish: PublishCommand;
}

/** Deletes a lock whoever holds it (administrative use) and wakes a waiter. Replies 1 when a lock was deleted, 0 when there was none. */
export const forceUnlock = defineLockScript<ForceUnlockArgs, boolean, number>({
  parse: parseFlag,
  name: 'dlockForceUnlock',
  keys: (a) => [a.lock, a.channel],
  argv: (a) => [a.publish],
  lua: `
local lock_key, channel = KEYS[1], KEYS[2]
local publish = ARGV[1]

if redis.call('del', lock_key) == 1 then
  redis.call(publish, channel, ${FREED_LUA})
  return 1
end
return 0
`,
});
