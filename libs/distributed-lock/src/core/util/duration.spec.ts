import { InvalidLockArgumentError } from '../errors/invalid-lock-argument.error.js';
import { MAX_DURATION_MS, toMilliseconds } from './duration.js';

describe('toMilliseconds', () => {
  const rule = { min: 0 };

  it.each([
    [250, 250],
    ['500ms', 500],
    ['5s', 5000],
    ['1.5s', 1500],
    ['2m', 120_000],
    ['1h', 3_600_000],
    [' 7 s ', 7000],
    [0.2, 1],
  ])('%p -> %p ms', (input, expected) => {
    expect(toMilliseconds(input, 'x', rule)).toBe(expected);
  });

  it.each([[-1], [Number.NaN], [Infinity], ['5 days'], ['s'], [''], [null], [{}], [[]], [MAX_DURATION_MS + 1]])('rejects %p', (input) => {
    expect(() => toMilliseconds(input, 'leaseTime', rule)).toThrow(InvalidLockArgumentError);
  });

  it("refuses a string without a unit ('42': seconds or milliseconds?), saying how to write it", () => {
    expect(() => toMilliseconds('42', 'waitTime', rule)).toThrow(/Invalid waitTime: "42" has no unit; write '42ms' or '42s'/);
  });

  it('names the argument and the minimum', () => {
    expect(() => toMilliseconds(3, 'leaseTime', { min: 10 })).toThrow(/Invalid leaseTime: 3 is below the minimum of 10 ms/);
  });
});
