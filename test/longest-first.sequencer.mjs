import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import Sequencer from '@jest/test-sequencer';

/**
 * Seconds the slow test files took in one whole run (test/suite-timings.json says which; refresh it with
 * scripts/suite-timings.mjs). Only the order depends on them: a stale figure costs time, never a result.
 */
const { seconds: SECONDS } = JSON.parse(readFileSync(new URL('suite-timings.json', import.meta.url), 'utf8'));

/**
 * Longest first, so that the workers finish together rather than one waiting for the last long
 * file (Jest's own order needs timings cached by an earlier run, which a fresh CI machine does not
 * have, and falls back on file size: nest-apps and the simulator's file, two of the slowest, are among
 * the smallest; without a figure the simulator's ran last, alone for minutes). A file's
 * own timing from an earlier run on this machine wins over the table; the rest keep Jest's order.
 */
export default class LongestFirstSequencer extends Sequencer {
  sort(tests) {
    const seconds = (test) => {
      const cached = this.time(test);
      if (cached != null) return cached / 1000;
      return SECONDS[relative(test.context.config.rootDir, test.path).split('\\').join('/')] ?? 0;
    };
    const ordered = super.sort([...tests]);
    const rank = new Map(ordered.map((test, i) => [test, i]));
    return ordered.sort((a, b) => seconds(b) - seconds(a) || rank.get(a) - rank.get(b));
  }
}
