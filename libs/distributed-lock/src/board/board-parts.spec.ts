import { LockEvents } from '../core/index.js';
import { scanPatternOf } from './board-glob.js';
import { esc } from './board-html.js';
import { LatencyHistogram } from './latency-histogram.js';
import { LockStats, OTHER_NAMES } from './lock-stats.js';
import { WaiterClock } from './waiter-clock.js';

describe('the lock board, without Redis', () => {
  it('a latency histogram gives percentiles to within 9 %, never above the max, in fixed memory', () => {
    const histogram = new LatencyHistogram();
    expect(histogram.percentile(99)).toBeUndefined();
    for (let ms = 1; ms <= 1000; ms++) histogram.record(ms);
    histogram.record(-1); // ignored
    expect(histogram.count).toBe(1000);
    for (const [p, exact] of [
      [50, 500],
      [90, 900],
      [99, 990],
    ] as const) {
      const value = histogram.percentile(p)!;
      expect(value).toBeGreaterThanOrEqual(exact);
      expect(value).toBeLessThanOrEqual(exact * 1.1);
    }
    expect(histogram.percentile(100)).toBe(1000);
  });

  it('a filter becomes a SCAN pattern: globs as they are, text as a substring, braces refused (core/util/redis-glob.spec.ts: how they match)', () => {
    expect(scanPatternOf('')).toBe('*');
    expect(scanPatternOf(' product:* ')).toBe('product:*');
    expect(scanPatternOf('restock')).toBe('*restock*');
    expect(scanPatternOf('a{b}')).toBeUndefined();
  });

  it('statistics per label from the events: waits, holds, timeouts, lost leases; bounded labels; a throwing metricName leaves the lock out', () => {
    const events = new LockEvents();
    const stats = new LockStats(
      (name) =>
        name === 'bad'
          ? (() => {
              throw new Error('no');
            })()
          : name.replace(/:.*$/, ':*'),
      2,
    );
    stats.start(events);
    events.emit('acquired', { name: 'product:1', kind: 'reentrant', waitedMs: 10, reentrant: false, token: 1 });
    events.emit('acquired', { name: 'product:2', kind: 'reentrant', waitedMs: 30, reentrant: false, token: 2 });
    events.emit('acquired', { name: 'product:2', kind: 'reentrant', waitedMs: 0, reentrant: true, token: 2 }); // reentrant: not a call that waited
    events.emit('failed', { name: 'product:3', kind: 'reentrant', waitedMs: 100, outcome: 'timeout' });
    events.emit('released', { name: 'product:1', kind: 'reentrant', heldMs: 5, token: 1 });
    events.emit('lost', { name: 'product:2', kind: 'reentrant', heldMs: 7, token: 2, reason: 'lease-expired' });
    events.emit('acquired', { name: 'order:1', kind: 'fair', waitedMs: 1, reentrant: false, token: 3 });
    events.emit('acquired', { name: 'job:1', kind: 'fair', waitedMs: 1, reentrant: false, token: 4 }); // a third label: counted as other names
    events.emit('acquired', { name: 'bad', kind: 'fair', waitedMs: 1, reentrant: false, token: 5 });
    const rows = stats.rows();
    expect(rows.map((row) => row.label)).toEqual(['product:*', OTHER_NAMES, 'order:*']);
    expect(rows[0]).toMatchObject({ acquired: 2, timedOut: 1, leasesLost: 1, wait: { count: 3, maxMs: 100 }, hold: { count: 2, maxMs: 7 } });
    expect(rows[1]).toMatchObject({ acquired: 1 }); // job:1 (bad is left out)
    stats.stop();
    expect(events.listenerCount('acquired')).toBe(0);
  });

  it('a waiter first seen at the first look at its lock has waited at least that long; one that arrived later, since it was seen', () => {
    const clock = new WaiterClock();
    expect(clock.look('lock', 0)).toBe(false);
    expect(clock.seen('lock', 'a', 0, false)).toEqual({ waitedMs: 0, atLeast: true });
    expect(clock.look('lock', 1000)).toBe(true);
    expect(clock.seen('lock', 'a', 1000, true)).toEqual({ waitedMs: 1000, atLeast: true });
    expect(clock.seen('lock', 'b', 1000, true)).toEqual({ waitedMs: 0, atLeast: false });
  });

  it('escapes what comes from Redis or a request', () => {
    expect(esc(`<script>alert("x")</script>&'`)).toBe('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;');
  });
});
