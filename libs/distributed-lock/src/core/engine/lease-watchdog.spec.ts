import { jest } from '@jest/globals';
import { systemClock } from '../util/clock.js';
import type { HeldLock } from './held-locks.js';
import { LeaseWatchdog, RENEWALS_PER_SLICE } from './lease-watchdog.js';

/** The watchdog reads only `renewingSince` of a lock; the renewal itself is the caller's. */
const locks = (n: number): HeldLock[] => Array.from({ length: n }, () => ({ renewingSince: undefined }) as HeldLock);

describe('LeaseWatchdog', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('starts a round over many locks in slices, with the event loop free between them', () => {
    const renewed: HeldLock[] = [];
    const watchdog = new LeaseWatchdog(systemClock, 1000, async (lock) => void renewed.push(lock));
    const held = locks(RENEWALS_PER_SLICE * 2 + 500);
    held.forEach((lock) => watchdog.add(lock));

    jest.advanceTimersByTime(1000);
    expect(renewed).toHaveLength(RENEWALS_PER_SLICE);
    // Released while the round is under way: not renewed.
    watchdog.delete(held[RENEWALS_PER_SLICE * 2 + 10]!);
    jest.advanceTimersToNextTimer(); // the next slice (setImmediate)
    expect(renewed).toHaveLength(RENEWALS_PER_SLICE * 2);
    jest.advanceTimersToNextTimer();
    expect(renewed).toHaveLength(RENEWALS_PER_SLICE * 2 + 499);
    expect(new Set(renewed).size).toBe(renewed.length);
    expect(renewed).not.toContain(held[RENEWALS_PER_SLICE * 2 + 10]);
    watchdog.stop();
  });

  it('skips a lock whose renewal is still in flight, and renews a small set in one go', () => {
    const renewed: HeldLock[] = [];
    const watchdog = new LeaseWatchdog(systemClock, 1000, async (lock) => void renewed.push(lock));
    const [slow, fast] = locks(2);
    slow!.renewingSince = 1;
    watchdog.add(slow!);
    watchdog.add(fast!);
    jest.advanceTimersByTime(1000);
    expect(renewed).toEqual([fast]);
    watchdog.stop();
  });

  it('stop() ends a round under way: no slice runs after it, no timer is left', () => {
    const renewed: HeldLock[] = [];
    const watchdog = new LeaseWatchdog(systemClock, 1000, async (lock) => void renewed.push(lock));
    locks(RENEWALS_PER_SLICE * 3).forEach((lock) => watchdog.add(lock));
    jest.advanceTimersByTime(1000);
    watchdog.stop();
    jest.runAllTimers();
    expect(renewed).toHaveLength(RENEWALS_PER_SLICE);
    expect(jest.getTimerCount()).toBe(0);
  });
});
