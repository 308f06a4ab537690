import { InvalidLockConfigError } from '../core/index.js';
import { resolveBoardSettings } from './board.options.js';

describe('the board options', () => {
  it('take the refresh interval as every duration of the library: milliseconds, or a string with a unit', () => {
    expect(resolveBoardSettings({}).refreshIntervalMs).toBe(1000);
    expect(resolveBoardSettings({ refreshInterval: 500 }).refreshIntervalMs).toBe(500);
    expect(resolveBoardSettings({ refreshInterval: '2s' }).refreshIntervalMs).toBe(2000);
    expect(resolveBoardSettings({ refreshInterval: '1h' }).refreshIntervalMs).toBe(3_600_000);
  });

  it('refuse an interval out of bounds or without a unit, naming the option', () => {
    for (const refreshInterval of ['100ms', 249, '2h', '5', 'soon', -1]) {
      expect(() => resolveBoardSettings({ refreshInterval })).toThrow(InvalidLockConfigError);
      expect(() => resolveBoardSettings({ refreshInterval })).toThrow(/board\.refreshInterval/);
    }
  });

  it('name the option when the old refreshIntervalMs is given', () => {
    expect(() => resolveBoardSettings({ refreshIntervalMs: 500 } as never)).toThrow(
      /"refreshIntervalMs" is not an option; known options are .*refreshInterval,/,
    );
  });
});
