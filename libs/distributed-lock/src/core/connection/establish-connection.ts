import type { RedisClient } from './connection-strategy.js';
import { LockConnectionError } from '../errors/lock-connection.error.js';

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
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      (async () => {
        if (client.status === 'wait') await client.connect();
        await client.ping();
      })(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        timer.unref();
      }),
    ]);
  } catch (error) {
    client.disconnect();
    const cause = firstError ?? (error as Error);
    throw new LockConnectionError(target, `${cause.message.replace(/\.+$/, "")}. Check that Redis runs there and that the address, credentials and TLS settings are right.`, cause);
  } finally {
    clearTimeout(timer);
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
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.quit(),
      new Promise((resolve) => {
        timer = setTimeout(resolve, 1000);
        timer.unref();
      }),
    ]);
  } catch {
    // QUIT failed: the connection is going away anyway; disconnect below makes sure of it.
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}
