import { randomBytes, timingSafeEqual } from 'node:crypto';
import { hostname } from 'node:os';
import { Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { LockService } from '../nest/index.js';
import { BoardForceUnlock } from './board-force-unlock.js';
import { BoardReader } from './board-reader.js';
import type { DistributedLockBoardEvents } from './board.events.js';
import type { BoardSettings } from './board.options.js';
import { LockStats } from './lock-stats.js';

/** Where a board is mounted, for its start-up log line. */
export interface BoardMount {
  readonly path: string;
  readonly guards: number;
}

/**
 * One mounted board: its reader (shared reads, see BoardReader), the statistics it keeps from the
 * lock client's events while the app runs, and, only when enabled, force-unlock. Holds no timer: a
 * closed app leaves nothing running.
 */
export class BoardService implements OnModuleInit, OnApplicationShutdown {
  readonly reader: BoardReader;
  readonly forceUnlock: BoardForceUnlock | undefined;
  private readonly stats: LockStats;
  private readonly logger = new Logger('DistributedLockBoard');
  /** Proves a force-unlock came from a confirmation page this process served (a cross-site form cannot read it). */
  private readonly formKey = randomBytes(16).toString('hex');

  constructor(
    private readonly locks: LockService,
    readonly settings: BoardSettings,
    events: DistributedLockBoardEvents,
    private readonly mount: BoardMount,
  ) {
    this.stats = new LockStats(settings.metricName, settings.statsLabels);
    this.reader = new BoardReader(locks, settings, this.stats, () => this.selfLabel());
    this.forceUnlock = settings.forceUnlock ? new BoardForceUnlock(locks, events, (message) => this.logger.warn(message)) : undefined;
  }

  onModuleInit(): void {
    this.stats.start(this.locks.events);
    const guard = this.mount.guards > 0 ? `behind ${this.mount.guards} guard(s) of its own` : 'with no guard of its own (only the global guards protect it)';
    this.logger.log(`Lock board at ${this.mount.path}, ${guard}, ${this.settings.forceUnlock ? 'force-unlock ENABLED' : 'read-only'}`);
  }

  onApplicationShutdown(): void {
    this.stats.stop();
  }

  get key(): string {
    return this.formKey;
  }

  /** Whether `key` is this process's form key (compared in constant time). */
  isFormKey(key: string | undefined): boolean {
    const given = Buffer.from(key ?? '');
    const expected = Buffer.from(this.formKey);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  /** How the page names its own process until its registration is read (`name@host:pid` then). */
  private selfLabel(): string {
    return `${hostname()}:${process.pid}`;
  }
}
