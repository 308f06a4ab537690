import { InvalidLockArgumentError } from '../errors/invalid-lock-argument.error.js';

/**
 * A duration: a number of milliseconds (the Nest convention) or a string with a unit: '500ms', '5s',
 * '2m', '1h'. A string without a unit ('42') is refused: read from a file or the environment, it is
 * as likely meant as seconds as milliseconds.
 */
export type Duration = number | string;

/** Longest duration a Node timer can represent (about 24.8 days). */
export const MAX_DURATION_MS = 2_147_483_647;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const DURATION_PATTERN = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/;

export interface DurationRule {
  /** Smallest accepted value in ms (inclusive). */
  min: number;
}

/**
 * Parses and checks a duration. Rejects NaN, Infinity, negatives, values under `rule.min`, values a
 * timer cannot hold, and strings without a known unit ('42' too), naming `argument` in the error.
 * Fractions of a millisecond round up, so '0.5ms' never becomes 0.
 */
export function toMilliseconds(value: unknown, argument: string, rule: DurationRule): number {
  let ms: number;
  if (typeof value === 'number') {
    ms = value;
  } else if (typeof value === 'string') {
    const match = DURATION_PATTERN.exec(value.trim());
    if (!match) {
      throw new InvalidLockArgumentError(argument, `"${value}" is not a duration; use milliseconds (5000) or a number with a unit: '500ms', '5s', '2m', '1h'.`);
    }
    if (match[2] === undefined) {
      throw new InvalidLockArgumentError(
        argument,
        `"${value}" has no unit; write '${match[1]}ms' or '${match[1]}s' (a number, not a string, is milliseconds).`,
      );
    }
    ms = Number(match[1]) * UNIT_MS[match[2]]!;
  } else {
    throw new InvalidLockArgumentError(argument, `expected milliseconds or a string like '5s', got ${describe(value)}.`);
  }
  if (!Number.isFinite(ms)) {
    throw new InvalidLockArgumentError(argument, `${String(value)} is not a finite duration; give a number of milliseconds.`);
  }
  ms = Math.ceil(ms);
  if (ms < rule.min) {
    throw new InvalidLockArgumentError(argument, `${String(value)} is below the minimum of ${rule.min} ms.`);
  }
  if (ms > MAX_DURATION_MS) {
    throw new InvalidLockArgumentError(argument, `${String(value)} exceeds the maximum of ${MAX_DURATION_MS} ms (about 24 days).`);
  }
  return ms;
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `"${value}"`;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return `${typeof value} ${String(value)}`;
  return typeof value;
}
