import type { RedisClient } from '../config/redis-client.js';
import { LockConnectionError } from '../errors/lock-connection.error.js';
import { settleWithin } from '../util/late-timer.js';

/** How long start-up may spend reaching Redis before it fails. */
export const STARTUP_TIMEOUT_MS = 10_000;

/**
 * Connects (if not yet connected) and proves the connection with a PING, within a deadline. On
 * failure the client is disconnected, so it does not go on retrying in the background, and the
 * error carries the server's own message (WRONGPASS, NOAUTH, certificate errors...).
 */
export async function establishConnection(client: RedisClient, target: string, timeoutMs = STARTUP_TIMEOUT_MS): Promise<void> {
  let firstError: Error | undefined;
  const onError = (error: Error): void => {
    firstError ??= error;
  };
  client.on('error', onError);
  try {
    await settleWithin(
      (async () => {
        if (client.status === 'wait') await client.connect();
        await client.ping();
      })(),
      timeoutMs,
      () => {
        throw new Error(`no answer within ${timeoutMs} ms`);
      },
    );
  } catch (error) {
    client.disconnect();
    const cause = firstError ?? (error as Error);
    throw new LockConnectionError(
      target,
      `${cause.message.replace(/\.+$/, '')}. Check that Redis runs there and that the address, credentials and TLS settings are right.`,
      cause,
    );
  } finally {
    client.off('error', onError);
  }
}

/** Closes a connection politely (QUIT), or at once if it is not connected or does not answer quickly. */
export async function closeConnection(client: RedisClient): Promise<void> {
  if (client.status === 'end') return;
  if (client.status !== 'ready') {
    client.disconnect();
    return;
  }
  try {
    await settleWithin(client.quit(), 1000, () => undefined);
  } catch {
    // QUIT failed: the connection is going away anyway; disconnect below makes sure of it.
  } finally {
    client.disconnect();
  }
}
