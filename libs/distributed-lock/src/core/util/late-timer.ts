/**
 * Like setTimeout, but the callback runs one event-loop turn after the timer fires, once pending I/O
 * has been read. After a stall (GC, a busy host), a reply that arrived in time is then seen before the
 * timeout is declared, instead of losing the race to the timer. Unref'd. Returns a cancel function.
 */
export function afterTimeout(ms: number, callback: () => void): () => void {
  let immediate: NodeJS.Immediate | undefined;
  const timer = setTimeout(() => {
    immediate = setImmediate(callback);
  }, ms);
  timer.unref();
  return () => {
    clearTimeout(timer);
    if (immediate) clearImmediate(immediate);
  };
}

/** Resolves after `ms` (a late timer, unref'd): a pause between retries. */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => afterTimeout(ms, resolve));
}

/**
 * Settles like `promise`, or with what `onTimeout` returns (or throws) if `ms` pass first (a late
 * timer: after a stall, a value that came in time still wins). The timer is cleared either way;
 * `promise` itself runs on. `ms` Infinity: no timer (setTimeout would take it for 1 ms).
 */
export function settleWithin<T, F>(promise: Promise<T>, ms: number, onTimeout: () => F): Promise<T | F> {
  if (ms === Infinity) return promise;
  return new Promise<T | F>((resolve, reject) => {
    const cancel = afterTimeout(Math.max(0, ms), () => {
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
