import type { Grant } from '../waiting/line-event.js';

const GRANTED_PREFIX = 'granted:';

/**
 * Lua: the message that tells the waiter `waiter` that a release granted it what it waits for (a
 * plain lock, a semaphore's permits), held in Redis in its name with the fencing token `token` until
 * `leaseEnd` (server ms): `granted:<owner>:<token>:<lease end>`. Each argument is a Lua expression.
 * The kinds that grant publish it and decode it with readGranted, so it is written and read here only.
 */
export function grantedMessageLua(waiter: string, token: string, leaseEnd: string): string {
  return `string.format('${GRANTED_PREFIX}%s:%.0f:%.0f', ${waiter}, ${token}, ${leaseEnd})`;
}

/**
 * The waiter and its grant, if `message` is a granted message (`leaseMs`: the whole lease such a grant
 * has); owner ids contain ':', so the numbers are read from the end. `grant` is undefined when they
 * cannot be read (the waiter is only woken, and looks for itself).
 */
export function readGranted(message: string, leaseMs: number): { owner: string; grant: Grant | undefined } | undefined {
  if (!message.startsWith(GRANTED_PREFIX)) return undefined;
  const body = message.slice(GRANTED_PREFIX.length);
  const end = body.lastIndexOf(':');
  const tokenAt = body.lastIndexOf(':', end - 1);
  const token = Number(body.slice(tokenAt + 1, end));
  const expiresAtServerMs = Number(body.slice(end + 1));
  const valid = tokenAt > 0 && Number.isSafeInteger(token) && Number.isFinite(expiresAtServerMs);
  return { owner: body.slice(0, tokenAt), grant: valid ? { token, expiresAtServerMs, leaseMs } : undefined };
}
