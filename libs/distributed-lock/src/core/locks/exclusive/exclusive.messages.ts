import type { ChannelMessages } from '../../waiting/line-event.js';
import { FREED } from '../freed.message.js';
import { readGranted } from '../granted.message.js';

/**
 * Lease of a lock a release grants to the first caller of the process that has waited longest (see
 * grant-to-longest-waiting.lua.ts): that caller holds it from the grant's message on and claims it with
 * its own lease in the background (one renewal). A waiter that died or left holds the lock up for this
 * long at most. A Lua argument of the releases that grant.
 */
export const GRANT_LEASE_MS = 500;
/** Waiters of other processes look again this long after a grant they were told of, in case it is never taken. */
const GRANT_RECHECK_MS = GRANT_LEASE_MS + 20;

/**
 * The codec of the exclusive kinds (plain, fair, RedLock: one hash, one release script): the messages
 * their scripts publish are FREED_LUA (`released`) and grantedMessageLua (`granted:<owner>:<token>:<end>`,
 * the plain lock's grant to one waiting caller, heard by every waiting process).
 */
export const EXCLUSIVE_MESSAGES: ChannelMessages = {
  decode(message) {
    const granted = readGranted(message, GRANT_LEASE_MS);
    return granted ? { type: 'addressed', ...granted, othersLookAfterMs: GRANT_RECHECK_MS } : FREED;
  },
};
