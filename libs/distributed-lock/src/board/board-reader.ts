import type { LockClient, LockInspection, LockInstanceInfo, LockNameList } from '../core/index.js';
import { boardLockOf, LEADER_PREFIX } from './board-lock.js';
import { redisGlob } from '../core/internal.js';
import { scanPatternOf } from './board-glob.js';
import type { BoardSettings } from './board.options.js';
import type { BoardLock, BoardQuery, BoardSnapshot } from './board-snapshot.js';
import type { LockStats } from './lock-stats.js';
import { WaiterClock } from './waiter-clock.js';

/** Leaderships shown at most (each is one inspection per refresh). */
const MAX_LEADERS = 200;
/** Statistics rows shown at most (the busiest). */
const MAX_STATS_ROWS = 100;
/** Distinct views (filter and page) remembered at once. */
const MAX_CACHED_VIEWS = 100;

interface Cached<T> {
  readonly at: number;
  readonly value: Promise<T>;
}

/**
 * Reads what the page shows, through the lock client's public inspection API only: `listNames` (SCAN
 * on every master, never KEYS) for the names matching the filter, `inspect` for the one page shown,
 * `listNames('leader:*')` and `inspect` for the leaderships, `listInstances` for the processes. Every
 * read is shared for most of a refresh interval by everyone looking at the same view, so the load on
 * Redis does not grow with the number of viewers: per interval, one SCAN pass per filter and one
 * inspection per lock on the pages being looked at.
 */
export class BoardReader {
  private readonly views = new Map<string, Cached<BoardSnapshot>>();
  private readonly scans = new Map<string, Cached<LockNameList>>();
  private others: Cached<[BoardLock[], LockInstanceInfo[]]> | undefined;
  private readonly clock = new WaiterClock();

  constructor(
    private readonly locks: LockClient,
    private readonly settings: BoardSettings,
    private readonly stats: LockStats,
    private readonly self: () => string,
  ) {}

  /** The snapshot of one view, read now or shared with a read started less than most of an interval ago. */
  read(query: BoardQuery): Promise<BoardSnapshot> {
    return this.shared(this.views, `${query.page}\u0000${query.filter}`, () => this.readNow(query));
  }

  private async readNow(query: BoardQuery): Promise<BoardSnapshot> {
    const started = this.locks.clock.now();
    const { pageSize } = this.settings;
    const pattern = scanPatternOf(query.filter);
    const base = {
      title: this.settings.title,
      at: new Date(this.locks.clock.wallNow()).toISOString(),
      target: this.locks.target,
      self: this.self(),
      query,
      pattern,
      forceUnlock: this.settings.forceUnlock,
      circuits: this.locks.circuits(),
    };
    const empty = { total: 0, truncated: false, page: 1, pages: 1, pageSize, rows: [] };
    if (pattern === undefined) {
      return {
        ...base,
        locks: empty,
        leaders: [],
        instances: [],
        stats: [],
        readMs: 0,
        error: 'A filter cannot contain { or }: they are part of the Redis keys.',
      };
    }
    try {
      const [names, [leaders, instances]] = await Promise.all([
        this.shared(this.scans, pattern, () => this.locks.listNames(pattern, { limit: this.settings.scanLimit })),
        this.sharedOthers(),
      ]);
      const entries = names.names.flatMap((entry) => entry.kinds.map((kind) => ({ name: entry.name, kind })));
      const pages = Math.max(1, Math.ceil(entries.length / pageSize));
      const page = Math.min(Math.max(1, query.page), pages);
      const shown = entries.slice((page - 1) * pageSize, page * pageSize);
      const inspections = await Promise.all(shown.map((entry) => this.locks.inspect(entry.name, entry.kind)));
      const rows = this.boardLocks(inspections);
      const matches = redisGlob(pattern);
      return {
        ...base,
        self: instances.find((instance) => instance.self)?.label ?? base.self,
        locks: { total: entries.length, truncated: names.truncated, page, pages, pageSize, rows },
        leaders,
        instances,
        stats: this.stats
          .rows()
          .filter((row) => matches.test(row.label))
          .slice(0, MAX_STATS_ROWS),
        readMs: Math.round(this.locks.clock.now() - started),
        error: undefined,
      };
    } catch (error) {
      const code = (error as { code?: string }).code;
      const message = `Reading the locks failed${code ? ` [${code}]` : ''}: ${(error as Error).message}`;
      return { ...base, locks: empty, leaders: [], instances: [], stats: this.stats.rows().slice(0, MAX_STATS_ROWS), readMs: 0, error: message };
    }
  }

  /** The leaderships and the registered processes: the same whatever the view, read once per interval. */
  private sharedOthers(): Promise<[BoardLock[], LockInstanceInfo[]]> {
    const now = this.locks.clock.now();
    if (this.others && now - this.others.at < this.ttl()) return this.others.value;
    const value = Promise.all([this.readLeaders(), this.locks.listInstances()]);
    const entry = { at: now, value };
    this.others = entry;
    value.catch(() => {
      if (this.others === entry) this.others = undefined; // a failed read is not kept
    });
    return value;
  }

  private async readLeaders(): Promise<BoardLock[]> {
    const { names } = await this.locks.listNames(`${LEADER_PREFIX}*`, { limit: MAX_LEADERS });
    const plain = names.filter((entry) => entry.kinds.includes('reentrant'));
    const inspections = await Promise.all(plain.map((entry) => this.locks.inspect(entry.name, 'reentrant')));
    return this.boardLocks(inspections.filter((inspection) => inspection.locked || inspection.waiting.length > 0));
  }

  private boardLocks(inspections: LockInspection[]): BoardLock[] {
    const now = this.locks.clock.now();
    return inspections.map((inspection) => boardLockOf(inspection, this.clock, now, this.settings.forceUnlock));
  }

  /** Shared reads live for most of a refresh interval, so a page polling every interval gets a fresh one. */
  private ttl(): number {
    return this.settings.refreshIntervalMs * 0.8;
  }

  private shared<T>(cache: Map<string, Cached<T>>, key: string, read: () => Promise<T>): Promise<T> {
    const now = this.locks.clock.now();
    const cached = cache.get(key);
    if (cached && now - cached.at < this.ttl()) return cached.value;
    if (cache.size >= MAX_CACHED_VIEWS) {
      for (const [old, entry] of cache) if (now - entry.at >= this.ttl()) cache.delete(old);
      if (cache.size >= MAX_CACHED_VIEWS) cache.clear();
    }
    const value = read();
    const entry = { at: now, value };
    cache.set(key, entry);
    value.catch(() => {
      if (cache.get(key) === entry) cache.delete(key); // a failed read is not kept
    });
    return value;
  }
}
