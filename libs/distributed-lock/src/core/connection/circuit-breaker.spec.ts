import { ManualClock } from '../../testing/manual-clock.js';
import { CommandNotSentError } from '../redis/command-not-sent.js';
import { CircuitBreaker, type CircuitChange } from './circuit-breaker.js';

const FAILURES = 3;
const RESET_AFTER_MS = 1000;
const PROBE_TIMEOUT_MS = 500;

/** A breaker on a ManualClock whose probes the test answers one by one. */
function setUp() {
  const clock = new ManualClock();
  const changes: CircuitChange[] = [];
  const probes: { resolve: (value: unknown) => void; reject: (error: Error) => void }[] = [];
  const breaker = new CircuitBreaker(
    { failures: FAILURES, resetAfterMs: RESET_AFTER_MS },
    clock,
    '127.0.0.1:6379',
    () => new Promise((resolve, reject) => probes.push({ resolve, reject })),
    PROBE_TIMEOUT_MS,
    (change) => changes.push(change),
  );
  const states = () => changes.map((change) => change.state);
  const failTimes = (n: number) => {
    for (let i = 0; i < n; i++) breaker.failed(breaker.sent(), new Error(`no reply ${i}`));
  };
  return { clock, breaker, changes, probes, states, failTimes };
}

describe('CircuitBreaker (one node, on the clock port)', () => {
  it('opens after `failures` calls in a row without a reply; a reply in between starts the count again', () => {
    const { breaker, states, failTimes } = setUp();
    failTimes(FAILURES - 1);
    breaker.succeeded(breaker.sent()); // an error reply counts as a reply too (LockNode says so)
    failTimes(FAILURES - 1);
    expect(breaker.state).toBe('closed');
    expect(breaker.admits).toBe(true);
    failTimes(1);
    expect(breaker.state).toBe('open');
    expect(breaker.admits).toBe(false);
    expect(states()).toEqual(['open']);
  });

  it('counts in the order calls were sent: failures of calls sent before one that got a reply are not counted', () => {
    const { breaker, failTimes } = setUp();
    const early = Array.from({ length: FAILURES }, () => breaker.sent()); // queued while the connection was down
    breaker.succeeded(breaker.sent()); // a call sent after them got its reply: the node answers
    for (const ticket of early) breaker.failed(ticket, new Error('max retries per request reached'));
    expect(breaker.state).toBe('closed');
    expect(breaker.failures).toBe(0);
    failTimes(FAILURES); // calls sent after the reply do count
    expect(breaker.state).toBe('open');
  });

  it('a batch that fails counts each of its calls', () => {
    const { breaker } = setUp();
    breaker.failed(breaker.sent(), new Error('no reply within 500 ms'), FAILURES);
    expect(breaker.state).toBe('open');
  });

  it('refuses with a not-sent error that names the node and when the probe is due', async () => {
    const { clock, breaker, failTimes } = setUp();
    failTimes(FAILURES);
    await clock.advance(400);
    const refusal = breaker.refusal('dlockReentrantAcquire');
    expect(refusal).toBeInstanceOf(CommandNotSentError);
    expect(refusal.circuit).toEqual({ node: '127.0.0.1:6379', retryAfterMs: RESET_AFTER_MS - 400 });
    expect(refusal.message).toMatch(/^not sent, so not run: dlockReentrantAcquire: the circuit breaker of 127\.0\.0\.1:6379 is open/);
  });

  it('sends one probe after resetAfter, refuses calls meanwhile, and closes when the probe gets its reply', async () => {
    const { clock, breaker, probes, states, failTimes } = setUp();
    failTimes(FAILURES);
    await clock.advance(RESET_AFTER_MS - 1);
    expect(probes).toHaveLength(0);
    await clock.advance(1);
    expect(probes).toHaveLength(1);
    expect(breaker.state).toBe('half-open');
    expect(breaker.admits).toBe(false);
    expect(breaker.refusal('x').circuit?.retryAfterMs).toBe(0);
    // More failures while it probes (calls sent before it opened timing out) start no other probe.
    failTimes(FAILURES);
    await clock.advance(PROBE_TIMEOUT_MS - 1);
    expect(probes).toHaveLength(1);
    probes[0]!.resolve('PONG');
    await clock.settle();
    expect(breaker.state).toBe('closed');
    expect(breaker.failures).toBe(0);
    expect(states()).toEqual(['open', 'half-open', 'closed']);
    expect(clock.pending).toBe(0);
  });

  it('a failed probe opens it for another resetAfter; a probe without a reply fails at the probe timeout', async () => {
    const { clock, breaker, changes, probes, states, failTimes } = setUp();
    failTimes(FAILURES);
    await clock.advance(RESET_AFTER_MS);
    probes[0]!.reject(new Error('connect ECONNREFUSED'));
    await clock.settle();
    expect(breaker.state).toBe('open');
    expect(changes.at(-1)?.error?.message).toBe('connect ECONNREFUSED');
    await clock.advance(RESET_AFTER_MS);
    expect(probes).toHaveLength(2);
    // This one never answers (a black-holed link): given up after the probe timeout, then open again.
    await clock.advance(PROBE_TIMEOUT_MS);
    expect(breaker.state).toBe('open');
    expect(changes.at(-1)?.error?.message).toBe(`the probe got no reply within ${PROBE_TIMEOUT_MS} ms`);
    expect(probes).toHaveLength(2);
    // Its late reply decides nothing: the next probe does.
    probes[1]!.resolve('PONG');
    await clock.settle();
    expect(breaker.state).toBe('open');
    await clock.advance(RESET_AFTER_MS);
    probes[2]!.resolve('PONG');
    await clock.settle();
    expect(states()).toEqual(['open', 'half-open', 'open', 'half-open', 'open', 'half-open', 'closed']);
  });

  it('probeNow() (the connection is ready again) probes at once, one probe at a time', async () => {
    const { clock, breaker, probes, failTimes } = setUp();
    breaker.probeNow();
    expect(probes).toHaveLength(0); // closed: nothing to probe
    failTimes(FAILURES);
    await clock.advance(10);
    breaker.probeNow();
    breaker.probeNow();
    expect(probes).toHaveLength(1);
    expect(breaker.state).toBe('half-open');
    probes[0]!.resolve('PONG');
    await clock.settle();
    expect(breaker.state).toBe('closed');
    expect(clock.pending).toBe(0); // the timer of the probe it replaced is gone
  });

  it('a reply to a call sent meanwhile (a renewal, or one sent before it opened) closes it before the probe', async () => {
    const { clock, breaker, probes, states, failTimes } = setUp();
    failTimes(FAILURES);
    breaker.succeeded(breaker.sent());
    expect(breaker.state).toBe('closed');
    expect(clock.pending).toBe(0); // the probe's timer is cancelled
    await clock.advance(RESET_AFTER_MS);
    expect(probes).toHaveLength(0);
    expect(states()).toEqual(['open', 'closed']);
  });

  it('stop() leaves no timer and tells nothing more', async () => {
    const { clock, breaker, probes, changes, failTimes } = setUp();
    failTimes(FAILURES);
    const told = changes.length;
    breaker.stop();
    expect(clock.pending).toBe(0);
    await clock.advance(10 * RESET_AFTER_MS);
    expect(probes).toHaveLength(0);
    breaker.succeeded(breaker.sent());
    failTimes(FAILURES);
    expect(changes).toHaveLength(told);
  });
});
