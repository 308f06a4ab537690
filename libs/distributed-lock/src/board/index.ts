/**
 * nestjs-distributed-lock/board: a live page of the locks (holders, waiters, leaders, instances, wait
 * and hold figures) mounted in your Nest app. See DistributedLockBoardModule.
 */
export { DistributedLockBoardModule } from './board.module.js';
export { DISTRIBUTED_LOCK_BOARD_OPTIONS, type BoardMountOptions } from './board.module-definition.js';
export type { DistributedLockBoardOptions } from './board.options.js';
export type { BoardGuard } from './board.controller.js';
export { DistributedLockBoardEvents, type BoardForceUnlockEvent, type BoardEventMap } from './board.events.js';
export type { BoardSnapshot, BoardLock, BoardLockKind, BoardHolder, BoardWaiter, BoardQuery } from './board-snapshot.js';
export type { LockStatsRow, DurationSummary } from './lock-stats.js';
