import { LockBackendError } from './lock-backend.error.js';

/**
 * The lock client did not send the call: the Redis node it needs failed the last calls in a row (no
 * reply within the operation timeout, or the connection down), so its circuit breaker is open and
 * refuses calls at once instead of letting each wait out the operation timeout. Nothing was sent, so
 * nothing changed in Redis: a lock was not taken, a release did not happen (it is retried in the
 * background, as after any failed release). A probe asks the node again after `circuitBreaker.resetAfter`
 * and closes the circuit when it answers. Waiting callers keep waiting through it until their waitTime.
 */
export class LockCircuitOpenError extends LockBackendError {
  constructor(
    operation: string,
    lockName: string,
    /** The node whose circuit is open (host:port or the client given; no credentials); undefined when the Redis client's own breaker refused. */
    readonly node: string | undefined,
    /** When the next probe of the node is due, in ms from now (0: a probe is under way); undefined when unknown. */
    readonly retryAfterMs: number | undefined,
    cause: unknown,
  ) {
    const where = node === undefined ? "the Redis client's circuit breaker is open" : `the circuit breaker of ${node} is open`;
    const when = retryAfterMs === undefined ? '' : retryAfterMs > 0 ? ` The next probe is in ${Math.ceil(retryAfterMs)} ms.` : ' A probe is under way.';
    super(operation, lockName, cause, {
      code: 'LOCK_CIRCUIT_OPEN',
      message:
        `${operation} of lock "${lockName}" was not sent: ${where} after calls to it failed in a row, so nothing changed in Redis.${when} ` +
        'Retry once Redis answers again (the circuit closes by itself), and check the link to Redis; set circuitBreaker: false to wait out each call instead.',
    });
  }
}
