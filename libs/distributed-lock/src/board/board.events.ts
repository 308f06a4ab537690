import { EventEmitter } from 'node:events';
import type { InspectedLockKind } from '../core/index.js';

/** A lock removed from the lock board (force-unlock), whoever held it. */
export interface BoardForceUnlockEvent {
  readonly name: string;
  readonly kind: InspectedLockKind;
  /** The fencing tokens removed: the holder's (or the writer's and every reader's). */
  readonly tokens: readonly number[];
  /** The processes that held it, as inspection labels them. */
  readonly holders: readonly string[];
  /** The remote address of the request, when the platform gives it. */
  readonly remoteAddress: string | undefined;
}

export interface BoardEventMap {
  'force-unlock': [BoardForceUnlockEvent];
}

/** What the lock board did that changes anything (only force-unlock, when enabled): inject it to audit. */
export class DistributedLockBoardEvents extends EventEmitter<BoardEventMap> {}
