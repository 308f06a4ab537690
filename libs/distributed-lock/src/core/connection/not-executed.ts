import { LockQuorumError } from '../errors/lock-quorum.error.js';
import { CommandNotSentError } from '../redis/command-not-sent.js';
import { LateOperation } from './lock-node.js';

/**
 * Whether a failed call is known not to have run in Redis, so that it changed nothing there: refused
 * before it was sent (CommandNotSentError: an open circuit breaker, the lock node's or the Redis
 * client's, or a closed client), or not sent, or refused by its script's guard, because its caller
 * could no longer be waiting (LateOperation). Looks through `cause`s (a LockBackendError wraps what
 * failed). Anything else (a timeout, a lost connection) has an unknown outcome: it may have run; so
 * has a RedLock call that failed for want of a majority (LockQuorumError), whatever its first cause:
 * the other masters may have run it.
 */
export function notExecuted(error: unknown): boolean {
  if (error instanceof LockQuorumError) return false;
  for (let each: unknown = error, depth = 0; each instanceof Error && depth < 5; each = each.cause, depth++) {
    if (each instanceof CommandNotSentError || each instanceof LateOperation) return true;
  }
  return false;
}

/** The refusal of an open circuit breaker in `error`'s causes, if that is what failed. */
export function circuitRefusal(error: unknown): CommandNotSentError | undefined {
  for (let each: unknown = error, depth = 0; each instanceof Error && depth < 5; each = each.cause, depth++) {
    if (each instanceof CommandNotSentError) return each.circuit ? each : undefined;
  }
  return undefined;
}
