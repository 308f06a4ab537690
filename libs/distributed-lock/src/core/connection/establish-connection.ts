import { DistributedLockError } from '../errors/distributed-lock.error.js';
import { LockConnectionError } from '../errors/lock-connection.error.js';
import type { RedisConnection } from '../redis/redis-port.js';
import type { Clock } from '../util/clock.js';
import { settleWithin } from '../util/late-timer.js';

/** How long start-up may spend reaching Redis before it fails. */
export const STARTUP_TIMEOUT_MS = 10_000;

/**
 * Connects (if not yet connected) and proves the connection with a PING, within a deadline. On
 * failure the client is disconnected, so it does not go on retrying in the background, and the
 * error carries the server's own message (WRONGPASS, NOAUTH, certificate errors...). A node-redis
 * client of the user's that is not connected fails with RedisClientNotConnectedError: the library
 * opens (and so disconnects) only what it made, or a lazy ioredis client, which ioredis itself would
 * connect at its first command.
 */
export async function establishConnection(client: RedisConnection, target: string, clock: Clock, timeoutMs = STARTUP_TIMEOUT_MS): Promise<void> {
  let firstError: Error | undefined;
  const onError = (error?: Error): void => {
    firstError ??= error;
  };
  client.on('error', onError);
  try {
    await settleWithin(
      clock,
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
    if (error instanceof DistributedLockError) throw error;
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
