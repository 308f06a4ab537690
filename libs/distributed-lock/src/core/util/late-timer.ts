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
