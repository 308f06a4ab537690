import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * The deterministic simulator (libs/lock-simulator, `npm run simulate`): the real library, several
 * processes on simulated Redis servers, in virtual time under seeded faults, every invariant checked on
 * every run. The suite runs a fixed batch of seeds, checks that runs replay exactly, and that every
 * mutant (a known bug put back) is caught: its controls. Longer soaks run on demand (see the
 * guarantees page of the docs).
 */
const MAIN = fileURLToPath(new URL('../../dist/simulator/lock-simulator/src/main.js', import.meta.url));

/** Each test's timeout; its simulator is killed a little before, so that a run that is too slow ends with the test. */
const SEEDS_MS = 600_000; // about 130 s of CPU on 2 threads: minutes when other test files and a busy process share the 2 cores
const SHORT_MS = 120_000;

function simulate(timeoutMs: number, ...args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, ...args], { maxBuffer: 64 * 1024 * 1024, timeout: timeoutMs - 5_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

describe('the deterministic simulator', () => {
  it(
    '1500 seeds over every kind, fault and shape: no invariant broken',
    async () => {
      const { code, output } = await simulate(SEEDS_MS, '--seeds', '1500', '--workers', '2');
      expect(output).toContain('no violation');
      expect(output).not.toContain('VIOLATION');
      expect(code).toBe(0);
    },
    SEEDS_MS,
  );

  it(
    'a seed replays exactly: the same story twice',
    async () => {
      const { code, output } = await simulate(SHORT_MS, '--seeds', '60', '--from', '20001', '--repeat', '--workers', '2');
      expect(output).not.toContain('NONDETERMINISTIC');
      expect(code).toBe(0);
    },
    SHORT_MS,
  );

  it(
    'every mutant is caught by its recorded seed, and that seed is clean without it',
    async () => {
      const { code, output } = await simulate(SHORT_MS, '--controls');
      expect(output).not.toMatch(/no longer catches|fails without the mutant|no catching seed/);
      expect(output.match(/^mutant .*: caught by seed/gm)?.length).toBeGreaterThanOrEqual(15);
      // The known gaps (mutant-seeds.json records what was hunted): no more than these six.
      expect(output.match(/^mutant .*: NOT CAUGHT in seeds/gm)?.length ?? 0).toBeLessThanOrEqual(6);
      expect(code).toBe(0);
    },
    SHORT_MS,
  );

  it(
    'control: a violation names its seed, prints the command that replays it, and fails the run',
    async () => {
      const { code, output } = await simulate(SHORT_MS / 2, '--mutant', 'fencing-floor-off', '--seeds', '400', '--workers', '1');
      expect(output).toMatch(/caught by seed \d+/);
      expect(code).toBe(0); // a hunt that found its mutant succeeded
      expect(output).toMatch(/replay: npm run simulate -- --mutant fencing-floor-off --seed \d+/);
      const seed = /caught by seed (\d+)/.exec(output)![1]!;
      const replayed = await simulate(SHORT_MS / 2, '--mutant', 'fencing-floor-off', '--seed', seed);
      expect(replayed.output).toMatch(/^VIOLATION /m);
      expect(replayed.code).toBe(1);
    },
    SHORT_MS,
  );
});
