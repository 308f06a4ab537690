import { systemClock } from '../util/clock.js';

const monotonicNow = (): number => systemClock.now();
import { NodeClock } from './node-clock.js';

/**
 * The bounds NodeClock keeps of a server's clock, against a fake TIME whose server clock is the local
 * monotonic clock plus a known offset, read at a chosen point of a slow round trip.
 */
describe('NodeClock', () => {
  const OFFSET = 1_700_000_000_000;
  const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

  /** A TIME command whose reply takes `beforeMs` to reach the server and `afterMs` to come back. */
  function slowTime(beforeMs: number, afterMs: number): () => Promise<string[]> {
    return async () => {
      await pause(beforeMs);
      const serverMs = monotonicNow() + OFFSET;
      await pause(afterMs);
      return [String(Math.floor(serverMs / 1000)), String(Math.floor((serverMs % 1000) * 1000))];
    };
  }

  it('places a server time on the local clock no later than the server read it, however the round trip splits', async () => {
    for (const [before, after] of [
      [0, 40],
      [40, 0],
      [20, 20],
    ] as const) {
      const clock = new NodeClock(slowTime(before, after), systemClock);
      expect(clock.localTimeOf(OFFSET)).toBeUndefined(); // unknown before a sample
      await clock.sample();
      const serverMs = monotonicNow() + OFFSET + 250; // a grant's expiry, as the server would write it
      const local = clock.localTimeOf(serverMs)!;
      expect(local).toBeLessThanOrEqual(serverMs - OFFSET); // never later than the truth
      expect(local).toBeGreaterThan(serverMs - OFFSET - (before + after) - 50); // and off by the round trip at most
    }
  });

  it('forgets the bound when the connection may lead to another server (reset), until the next sample', async () => {
    const clock = new NodeClock(slowTime(0, 0), systemClock);
    await clock.sample();
    expect(clock.localTimeOf(OFFSET)).toBeDefined();
    clock.reset();
    expect(clock.localTimeOf(OFFSET)).toBeUndefined();
    await clock.sample();
    expect(clock.localTimeOf(OFFSET)).toBeDefined();
  });

  it('the operation deadline it gives (notAfter) is never later than the server reads the end of the timeout', async () => {
    const clock = new NodeClock(slowTime(30, 10), systemClock);
    await clock.sample();
    const sentAt = monotonicNow();
    const notAfter = clock.notAfter(sentAt, 100)!;
    expect(notAfter).toBeLessThanOrEqual(sentAt + 100 + OFFSET);
    expect(notAfter).toBeGreaterThan(sentAt + 100 + OFFSET - 40 - 50);
  });
});
