import type { CancelTimer, Clock } from './clock.js';

/**
 * Like a timer, but the callback runs one event-loop turn after the timer fires, once pending I/O
 * has been read. After a stall (GC, a busy host), a reply that arrived in time is then seen before the
 * timeout is declared, instead of losing the race to the timer. Returns a cancel function.
 */
export function afterTimeout(clock: Clock, ms: number, callback: () => void): CancelTimer {
  let cancelSoon: CancelTimer | undefined;
  const cancelTimer = clock.setTimer(ms, () => {
    cancelSoon = clock.soon(callback);
  });
  return () => {
    cancelTimer();
    cancelSoon?.();
  };
}

/** Resolves after `ms` (a late timer): a pause between retries. */
export function pause(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => afterTimeout(clock, ms, resolve));
}

/**
 * Settles like `promise`, or with what `onTimeout` returns (or throws) if `ms` pass first (a late
 * timer: after a stall, a value that came in time still wins). The timer is cleared either way;
 * `promise` itself runs on. `ms` Infinity: no timer.
 */
export function settleWithin<T, F>(clock: Clock, promise: Promise<T>, ms: number, onTimeout: () => F): Promise<T | F> {
  if (ms === Infinity) return promise;
  return new Promise<T | F>((resolve, reject) => {
    const cancel = afterTimeout(clock, Math.max(0, ms), () => {
      try {
        resolve(onTimeout());
      } catch (error) {
        reject(error);
      }
    });
    promise.then(
      (value) => {
        cancel();
        resolve(value);
      },
      (error: unknown) => {
        cancel();
        reject(error);
      },
    );
  });
}
