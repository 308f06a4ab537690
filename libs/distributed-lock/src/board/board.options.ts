import { InvalidLockConfigError, type Duration } from '../core/index.js';
import { configDuration } from '../core/internal.js';

/** Options of the lock board (`DistributedLockBoardModule.forRoot`), besides where it is mounted and its guards. */
export interface DistributedLockBoardOptions {
  /**
   * Let the page force-unlock a lock (default false: the page only reads). When true, each held lock
   * gets a "force unlock" link to a confirmation page that names the token it will remove; the
   * removal is logged (Nest Logger, warning) and emitted as `force-unlock` on DistributedLockBoardEvents.
   */
  forceUnlock?: boolean;
  /**
   * How often an open page refreshes itself: milliseconds or a string like `'5s'`, as every duration
   * of the library (default 1 s, at least 250 ms, at most 1 h). Reads are shared by every viewer.
   */
  refreshInterval?: Duration;
  /** Locks per page (default 50, at most 500): each page inspects this many locks in Redis per refresh. */
  pageSize?: number;
  /** The most lock names one refresh finds by SCAN (default 20,000, at most 100,000); past it the page says the list is cut. */
  scanLimit?: number;
  /**
   * The statistics' label for a lock name, as the metrics' `metricName` option (e.g.
   * `(name) => name.replace(/:.*$/, ':*')`; undefined leaves the lock out). Default: the name itself.
   * At most `statsLabels` labels are kept; later ones are counted under "(other names)".
   */
  metricName?: (name: string) => string | undefined;
  /** Distinct statistics labels kept (default 200, at most 10,000). */
  statsLabels?: number;
  /** Shown in the page's title (default "Distributed locks"). */
  title?: string;
}

export interface BoardSettings {
  readonly forceUnlock: boolean;
  readonly refreshIntervalMs: number;
  readonly pageSize: number;
  readonly scanLimit: number;
  readonly metricName: (name: string) => string | undefined;
  readonly statsLabels: number;
  readonly title: string;
}

const KEYS = ['forceUnlock', 'refreshInterval', 'pageSize', 'scanLimit', 'metricName', 'statsLabels', 'title'];

function integer(value: unknown, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidLockConfigError(`board.${name}`, `expected an integer from ${min} to ${max}, got ${JSON.stringify(value)}.`);
  }
  return value;
}

function interval(value: unknown, name: string, fallback: number, min: number, max: number): number {
  const ms = configDuration(value, `board.${name}`, undefined, undefined, fallback, min);
  if (ms > max) throw new InvalidLockConfigError(`board.${name}`, `${String(value)} exceeds the maximum of ${max} ms.`);
  return ms;
}

/** Checks the board's options once, at start-up (InvalidLockConfigError names the wrong one). */
export function resolveBoardSettings(options: DistributedLockBoardOptions | undefined): BoardSettings {
  const given = (options ?? {}) as Record<string, unknown>;
  const unknown = Object.keys(given).find((key) => !KEYS.includes(key) && key !== 'path' && key !== 'guards');
  if (unknown !== undefined) throw new InvalidLockConfigError('board', `"${unknown}" is not an option; known options are path, guards, ${KEYS.join(', ')}.`);
  if (given.forceUnlock !== undefined && typeof given.forceUnlock !== 'boolean') {
    throw new InvalidLockConfigError('board.forceUnlock', `expected true or false, got ${JSON.stringify(given.forceUnlock)}.`);
  }
  if (given.metricName !== undefined && typeof given.metricName !== 'function') {
    throw new InvalidLockConfigError('board.metricName', 'expected a function (name) => label.');
  }
  if (given.title !== undefined && typeof given.title !== 'string') throw new InvalidLockConfigError('board.title', 'expected a string.');
  return {
    forceUnlock: given.forceUnlock === true,
    refreshIntervalMs: interval(given.refreshInterval, 'refreshInterval', 1000, 250, 3_600_000),
    pageSize: integer(given.pageSize, 'pageSize', 50, 1, 500),
    scanLimit: integer(given.scanLimit, 'scanLimit', 20_000, 1, 100_000),
    metricName: (given.metricName as BoardSettings['metricName'] | undefined) ?? ((name) => name),
    statsLabels: integer(given.statsLabels, 'statsLabels', 200, 1, 10_000),
    title: (given.title as string | undefined) ?? 'Distributed locks',
  };
}
