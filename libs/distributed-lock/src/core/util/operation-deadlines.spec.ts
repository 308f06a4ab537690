import type { CancelTimer, Clock } from './clock.js';
import { OperationDeadlines } from './operation-deadlines.js';

/** A clock moved by hand: timers fire in `advance`, `soon` callbacks right after them. */
class StepClock implements Clock {
  private time = 0;
  private timers: { at: number; fn: () => void; cancelled: boolean }[] = [];

  now(): number {
    return this.time;
  }

  wallNow(): number {
    return this.time;
  }

  setTimer(ms: number, fn: () => void): CancelTimer {
    const timer = { at: this.time + ms, fn, cancelled: false };
    this.timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  soon(fn: () => void): CancelTimer {
    return this.setTimer(0, fn);
  }

  keepAlive(): CancelTimer {
    return () => undefined;
  }

  get armed(): number {
    return this.timers.filter((timer) => !timer.cancelled).length;
  }

  advance(ms: number): void {
    this.time += ms;
    for (let due = this.nextDue(); due; due = this.nextDue()) {
      this.timers = this.timers.filter((timer) => timer !== due);
      due.fn();
    }
  }

  private nextDue(): { at: number; fn: () => void; cancelled: boolean } | undefined {
    return this.timers.filter((timer) => !timer.cancelled && timer.at <= this.time).sort((a, b) => a.at - b.at)[0];
  }
}

describe('OperationDeadlines', () => {
  it('expires, in order, the operations still tracked at their deadline, and none that were done', () => {
    const clock = new StepClock();
    const deadlines = new OperationDeadlines(100, clock);
    const expired: string[] = [];
    const a = deadlines.track(() => expired.push('a'));
    clock.advance(10);
    const b = deadlines.track(() => expired.push('b'));
    clock.advance(10);
    deadlines.track(() => expired.push('c'));
    const d = deadlines.track(() => expired.push('d'));
    deadlines.done(b); // from the middle
    deadlines.done(d); // the last
    expect(deadlines.size).toBe(2);

    clock.advance(80); // a's deadline (100)
    expect(expired).toEqual(['a']);
    clock.advance(20); // c's (120)
    expect(expired).toEqual(['a', 'c']);
    expect(deadlines.size).toBe(0);

    deadlines.done(a); // done after it expired: nothing changes
    deadlines.done(b); // done twice
    expect(deadlines.size).toBe(0);
    expect(clock.armed).toBe(0); // nothing tracked, no timer left armed
  });

  it('keeps its order when operations come and go one at a time, and tracks new ones after an empty spell', () => {
    const clock = new StepClock();
    const deadlines = new OperationDeadlines(50, clock);
    const expired: number[] = [];
    for (let i = 0; i < 5; i++) deadlines.done(deadlines.track(() => expired.push(i)));
    expect(deadlines.size).toBe(0);
    const first = deadlines.track(() => expired.push(5));
    clock.advance(1);
    deadlines.track(() => expired.push(6));
    deadlines.done(first); // the first, with another behind it
    clock.advance(60);
    expect(expired).toEqual([6]);
  });

  it('lets an expiry track a new operation, which gets its own deadline', () => {
    const clock = new StepClock();
    const deadlines = new OperationDeadlines(10, clock);
    const expired: string[] = [];
    deadlines.track(() => {
      expired.push('first');
      deadlines.track(() => expired.push('second'));
    });
    clock.advance(10);
    expect(expired).toEqual(['first']);
    clock.advance(10);
    expect(expired).toEqual(['first', 'second']);
  });

  it('expires nothing once stopped', () => {
    const clock = new StepClock();
    const deadlines = new OperationDeadlines(10, clock);
    const expired: string[] = [];
    deadlines.track(() => expired.push('a'));
    deadlines.stop();
    clock.advance(100);
    expect(expired).toEqual([]);
  });
});
