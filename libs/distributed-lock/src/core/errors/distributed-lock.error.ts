/**
 * Stable machine-readable codes. They are part of the public API: match on `error.code`,
 * never on the message text.
 */
export type DistributedLockErrorCode =
  | 'LOCK_NOT_HELD'
  | 'LOCK_ACQUIRE_TIMEOUT'
  | 'LOCK_ACQUIRE_ABORTED'
  | 'LOCK_LOST'
  | 'LOCK_INVALID_ARGUMENT'
  | 'LOCK_INVALID_CONFIG'
  | 'LOCK_CONNECTION_FAILED'
  | 'LOCK_BACKEND_ERROR'
  | 'LOCK_CLIENT_CLOSED'
  | 'LOCK_NAME_TEMPLATE'
  | 'LOCK_REPLICA_ACK_FAILED'
  | 'LOCK_QUORUM_FAILED'
  | 'LOCK_CIRCUIT_OPEN'
  | 'LOCK_UNSUPPORTED'
  | 'LOCK_STALE_TOKEN'
  | 'LOCK_SCRIPT_KEYS'
  | 'LOCK_CLIENT_NOT_CONNECTED'
  | 'LOCK_UNSUPPORTED_CLIENT';

/** Base class of every error this library throws. */
export abstract class DistributedLockError extends Error {
  abstract readonly code: DistributedLockErrorCode;

  protected constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

export function isDistributedLockError(value: unknown): value is DistributedLockError {
  return value instanceof DistributedLockError;
}
