import { DistributedLockError } from './distributed-lock.error.js';

/**
 * The node-redis client given in `options.client` is not connected: never connected (node-redis,
 * unlike ioredis, does not connect by itself, and the library leaves a client you own to you), or
 * closed since.
 */
export class RedisClientNotConnectedError extends DistributedLockError {
  readonly code = 'LOCK_CLIENT_NOT_CONNECTED' as const;

  constructor(readonly client: string) {
    super(
      `The ${client} given in options.client is not connected. Call \`await client.connect()\` before the lock client connects (LockClient.connect(), or the Nest module's start), and close it only after the lock client is closed.`,
    );
  }
}
