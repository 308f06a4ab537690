import { CommandNotSentError } from './command-not-sent.js';
import { isErrorClass } from './reply-errors.js';

export { CommandNotSentError };

/**
 * GLIDE's errors, told apart by class (the library does not import GLIDE): `RequestError` is the
 * server's refusal of a command, and the base of `TimeoutError` (no reply within the client's
 * `requestTimeout`), `ConnectionError`, `ExecAbortError`, `ConfigurationError` and
 * `CircuitBreakerError`; `ClosingError` means the client is closed (by its owner, or by GLIDE
 * itself after an unrecoverable error).
 */
export type GlideFailure = 'reply' | 'timeout' | 'connection' | 'closed' | 'circuit-open' | 'other';

/** Which of GLIDE's failures `error` is. */
export function glideFailure(error: unknown): GlideFailure {
  if (!(error instanceof Error)) return 'other';
  if (isErrorClass(error, 'CircuitBreakerError')) return 'circuit-open';
  if (isErrorClass(error, 'ClosingError')) return 'closed';
  if (isErrorClass(error, 'TimeoutError')) return 'timeout';
  if (isErrorClass(error, 'ConnectionError')) return 'connection';
  // RequestError itself, not a subclass: the server answered with an error.
  if (error.constructor.name === 'RequestError') return 'reply';
  return 'other';
}

/**
 * GLIDE words a server's error reply its own way: an error code it knows becomes a kind
 * ("An error was signalled by the server: - NoScriptError: No matching script."), one it does not
 * keeps its code ("DLOCK_LATE: 1795788050696"). NOSCRIPT drives the EVAL fallback.
 */
export function isGlideNoScript(error: unknown): boolean {
  return error instanceof Error && (error.message.includes('NoScriptError') || error.message.startsWith('NOSCRIPT'));
}

/**
 * A failure as the layers above read it: a command the client refused to send becomes
 * CommandNotSentError (it did not run); anything else passes unchanged (the server's error text is
 * kept in the message, which is how the guarded scripts' `DLOCK_LATE` refusal is recognised).
 */
export function fromGlide(error: unknown): unknown {
  const failure = glideFailure(error);
  if (failure === 'circuit-open') return new CommandNotSentError("GLIDE's circuit breaker is open", error, {});
  if (failure === 'closed' && (error as Error).message.startsWith('Unable to execute requests')) {
    return new CommandNotSentError('the GLIDE client is closed', error);
  }
  return error;
}
