import { performance } from 'node:perf_hooks';

/** Stops a timer the clock set (harmless once it has fired, and when called twice). */
export type CancelTimer = () => void;

/**
 * Time, as the library reads and schedules it: the one port through which every clock read and every
 * timer of the core and the Nest layer goes (a lint rule forbids the globals elsewhere). The default,
 * `systemClock`, is Node's; a test or a simulator gives its own, and the whole library then runs in
 * its time: leases, timeouts, waits, renewals, back-offs.
 *
 * Lease accounting uses `now()`, a monotonic clock: wall-clock time can jump with NTP or a manual
 * change, and a lease deadline computed from it could then be too late, which is unsafe.
 */
export interface Clock {
  /** Monotonic milliseconds (any origin): deadlines, timeouts, durations. */
  now(): number;
  /** Milliseconds since the Unix epoch: only for what people read (timestamps shown, logged). */
  wallNow(): number;
  /**
   * Calls `fn` once `ms` have passed. The timer keeps no process alive (unref'd): a caller that awaits
   * an answer keeps its process alive through `keepAlive`.
   */
  setTimer(ms: number, fn: () => void): CancelTimer;
  /** Calls `fn` once the I/O already received has been read (Node's setImmediate): the end of this turn. */
  soon(fn: () => void): CancelTimer;
  /** Keeps the process alive until the returned function is called (some caller awaits an answer). */
  keepAlive(): CancelTimer;
}

/** Node's clock: performance.now, Date.now, unref'd setTimeout, setImmediate. */
export const systemClock: Clock = {
  now: () => performance.now(),
  wallNow: () => Date.now(),
  setTimer(ms, fn) {
    // setTimeout takes Infinity (and anything over 2^31 - 1) for 1 ms: such a timer never fires.
    if (!(ms < 2_147_483_647)) return () => undefined;
    const timer = setTimeout(fn, Math.max(0, ms));
    timer.unref();
    return () => clearTimeout(timer);
  },
  soon(fn) {
    const immediate = setImmediate(fn);
    return () => clearImmediate(immediate);
  },
  keepAlive() {
    const timer = setInterval(() => undefined, 2_147_483_647);
    return () => clearInterval(timer);
  },
};

/**
 * Repeats `fn` every `ms` on `clock` until the returned function is called (the next run is timed
 * from the start of the previous one, as setInterval does).
 */
export function every(clock: Clock, ms: number, fn: () => void): CancelTimer {
  let cancel: CancelTimer;
  let stopped = false;
  const tick = (): void => {
    if (stopped) return;
    cancel = clock.setTimer(ms, tick);
    fn();
  };
  cancel = clock.setTimer(ms, tick);
  return () => {
    stopped = true;
    cancel();
  };
}
