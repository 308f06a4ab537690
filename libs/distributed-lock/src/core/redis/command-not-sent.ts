/** Which circuit breaker refused a command: a lock node's (`node` names it), or the Redis client's own (no node). */
export interface CircuitRefusal {
  readonly node?: string;
  /** When the breaker probes the node next, in ms from the refusal (0: a probe is under way). */
  readonly retryAfterMs?: number;
}

/**
 * A command that was refused before it was sent, so it did not run on the server: unlike a timeout or
 * a lost connection, whose command may have run. The engine reads it as "not executed": nothing to give
 * back, no uncertain outcome. Made by the Valkey GLIDE port (GLIDE's own circuit breaker, a closed
 * client) and by a lock node whose circuit breaker is open (connection/circuit-breaker.ts); `circuit`
 * says which breaker, when one refused it.
 */
export class CommandNotSentError extends Error {
  constructor(
    reason: string,
    cause?: unknown,
    readonly circuit?: CircuitRefusal,
  ) {
    super(`not sent, so not run: ${reason}`, cause === undefined ? undefined : { cause });
    this.name = 'CommandNotSentError';
  }
}
