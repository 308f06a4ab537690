import type { ChannelMessages, Grant } from '../../waiting/line-event.js';
import { FREED } from '../freed.message.js';

/**
 * Lease of permits a release grants to the first waiter in line (sem_serve_line) until that waiter
 * claims them with its own lease (one renewal, in the background, from the message on). A process that
 * died while waiting holds those permits up for this long.
 */
export const SEMAPHORE_GRANT_LEASE_MS = 250;

const NEXT_PREFIX = 'next:';
const GRANTED_PREFIX = 'granted:';

/**
 * Lua: the message that wakes the waiter whose owner id is the Lua expression `waiter` (its request
 * exceeds the semaphore's size, so that it is refused at once).
 */
export function nextMessageLua(waiter: string): string {
  return `'${NEXT_PREFIX}' .. ${waiter}`;
}

/**
 * Lua: the message that tells the waiter `waiter` that permits were granted to it, with the fencing
 * token `token` and a lease that ends at `leaseEnd` (server ms): `granted:<owner>:<token>:<lease end>`.
 * Each argument is a Lua expression.
 */
export function grantedMessageLua(waiter: string, token: string, leaseEnd: string): string {
  return `string.format('${GRANTED_PREFIX}%s:%.0f:%.0f', ${waiter}, ${token}, ${leaseEnd})`;
}

/** `<owner>:<token>:<lease end>`; owner ids contain ':', so the numbers are read from the end. */
function readGranted(body: string): { owner: string; grant: Grant | undefined } {
  const end = body.lastIndexOf(':');
  const tokenAt = body.lastIndexOf(':', end - 1);
  const token = Number(body.slice(tokenAt + 1, end));
  const expiresAtServerMs = Number(body.slice(end + 1));
  const valid = tokenAt > 0 && Number.isSafeInteger(token) && Number.isFinite(expiresAtServerMs);
  return { owner: body.slice(0, tokenAt), grant: valid ? { token, expiresAtServerMs, leaseMs: SEMAPHORE_GRANT_LEASE_MS } : undefined };
}

/**
 * The semaphore's codec: the messages its scripts publish on the channel of the waiter's process are
 * nextMessageLua and grantedMessageLua, each addressed to one waiter.
 */
export const SEMAPHORE_MESSAGES: ChannelMessages = {
  decode(message) {
    if (message.startsWith(NEXT_PREFIX)) return { type: 'addressed', owner: message.slice(NEXT_PREFIX.length), grant: undefined };
    if (message.startsWith(GRANTED_PREFIX)) return { type: 'addressed', ...readGranted(message.slice(GRANTED_PREFIX.length)) };
    return FREED;
  },
};
