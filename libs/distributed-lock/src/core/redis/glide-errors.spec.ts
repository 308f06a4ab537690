import { CircuitBreakerError, ClosingError, ConnectionError, RequestError, TimeoutError } from '@valkey/valkey-glide';
import { CommandNotSentError, fromGlide, glideFailure, isGlideNoScript } from './glide-errors.js';

// GLIDE's own error classes (the library tells them apart by class name, without importing GLIDE).
describe("GLIDE's errors, as the lock client reads them", () => {
  it('tells the kinds apart, subclasses before RequestError (the server refusing a command)', () => {
    expect(glideFailure(new RequestError('An error was signalled by the server: - ResponseError: bad'))).toBe('reply');
    expect(glideFailure(new TimeoutError('timed out'))).toBe('timeout');
    expect(glideFailure(new ConnectionError('gone'))).toBe('connection');
    expect(glideFailure(new ClosingError('closed'))).toBe('closed');
    expect(glideFailure(new CircuitBreakerError('open'))).toBe('circuit-open');
    expect(glideFailure(new Error('plain'))).toBe('other');
  });

  it("reads an open circuit breaker, and a closed client's refusal, as not sent: the command did not run", () => {
    const open = new CircuitBreakerError('Circuit breaker is open');
    const mapped = fromGlide(open);
    expect(mapped).toBeInstanceOf(CommandNotSentError);
    expect((mapped as Error).cause).toBe(open);
    const closed = new ClosingError('Unable to execute requests; the client is closed. Please create a new client.');
    expect(fromGlide(closed)).toBeInstanceOf(CommandNotSentError);
  });

  it('keeps what may have run as it is: a timeout, a lost connection, a client closed under a command in flight, a refusal', () => {
    for (const error of [new TimeoutError('timed out'), new ConnectionError('gone'), new ClosingError(''), new RequestError('DLOCK_LATE: 17')]) {
      expect(fromGlide(error)).toBe(error);
    }
  });

  it("recognises NOSCRIPT in GLIDE's wording, so that the script is sent once as EVAL", () => {
    expect(isGlideNoScript(new RequestError('An error was signalled by the server: - NoScriptError: No matching script. Please use EVAL.'))).toBe(true);
    expect(isGlideNoScript(new RequestError('An error was signalled by the server: - ResponseError: NOSCRIPTED'))).toBe(false);
  });
});
