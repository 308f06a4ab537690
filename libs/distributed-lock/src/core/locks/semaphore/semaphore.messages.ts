import type { ChannelMessages } from '../../waiting/line-event.js';
import { FREED } from '../freed.message.js';
import { readGranted } from '../granted.message.js';

/**
 * Lease of permits a release grants to the first waiter in line (sem_serve_line) until that waiter
 * claims them with its own lease (one renewal, in the background, from the message on). A process that
 * died while waiting holds those permits up for this long.
 */
export const SEMAPHORE_GRANT_LEASE_MS = 250;

const NEXT_PREFIX = 'next:';

/**
 * Lua: the message that wakes the waiter whose owner id is the Lua expression `waiter` (its request
 * exceeds the semaphore's size, so that it is refused at once).
 */
export function nextMessageLua(waiter: string): string {
  return `'${NEXT_PREFIX}' .. ${waiter}`;
}

/**
 * The semaphore's codec: the messages its scripts publish on the channel of the waiter's process are
 * nextMessageLua and grantedMessageLua (a grant of permits), each addressed to one waiter.
 */
export const SEMAPHORE_MESSAGES: ChannelMessages = {
  decode(message) {
    if (message.startsWith(NEXT_PREFIX)) return { type: 'addressed', owner: message.slice(NEXT_PREFIX.length), grant: undefined };
    const granted = readGranted(message, SEMAPHORE_GRANT_LEASE_MS);
    return granted ? { type: 'addressed', ...granted } : FREED;
  },
};
