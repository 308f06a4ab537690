import type { ChannelMessages } from '../../waiting/line-event.js';
import { FREED } from '../freed.message.js';

/**
 * Lease of a lock granted to a waiting process until one of its callers takes it over (normally
 * within a round trip). A process that died while marked as waiting holds the lock up for this long.
 * A Lua argument of the releases that grant (see grant-to-longest-waiting.lua.ts).
 */
export const GRANT_LEASE_MS = 250;
/** Waiters of other processes look again this long after a grant they were told of, in case it is never taken. */
const GRANT_RECHECK_MS = GRANT_LEASE_MS + 20;

const GRANT_PREFIX = 'grant:';

/** Lua: the message that says the lock was granted to the waiting process whose client id is the Lua expression `client`. */
export function grantMessageLua(client: string): string {
  return `'${GRANT_PREFIX}' .. ${client}`;
}

/**
 * The codec of the exclusive kinds (plain, fair, RedLock: one hash, one release script): the messages
 * their scripts publish are FREED_LUA (`released`) and grantMessageLua (`grant:<client id>`).
 */
export const EXCLUSIVE_MESSAGES: ChannelMessages = {
  decode(message) {
    if (!message.startsWith(GRANT_PREFIX)) return FREED;
    return { type: 'granted-to-process', client: message.slice(GRANT_PREFIX.length), recheckInMs: GRANT_RECHECK_MS };
  },
};
