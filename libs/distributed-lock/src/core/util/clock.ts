import { performance } from 'node:perf_hooks';

/**
 * Monotonic milliseconds for lease accounting. Wall-clock time (Date.now) can jump with NTP or a
 * manual change; a lease deadline computed from it could then be too late, which is unsafe.
 */
export function monotonicNow(): number {
  return performance.now();
}
