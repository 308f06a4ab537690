import type { RedisCommands } from '../redis/redis-port.js';
import type { LockNode } from '../connection/lock-node.js';
import type { BackgroundOperation } from '../engine/background-work.js';
import type { LockEngine } from '../engine/lock-engine.js';
import type { InspectedLockKind, LockInspection } from '../inspection/lock-inspection.js';
import type { LockKeys } from '../scripts/lock-keys.js';
import type { PublishCommand } from '../scripts/lock-script.js';
import type { Clock } from '../util/clock.js';
import type { AcquisitionPort } from './acquisition-port.js';

/** What a lock object needs of its client's engine: who owns what this process holds, and releasing it. */
export type Holds = Pick<LockEngine, 'currentOwner' | 'byName' | 'held' | 'release' | 'markResourceLost' | 'timeoutError' | 'assertOpen'>;

/**
 * What a client gives its lock objects (BaseLock and the kinds, semaphores, multi-locks), built once
 * per client by LockClient: where their scripts run and how their keys are named, bounded calls, this
 * process's holds, the acquisitions' port, and inspection. Each kind uses the part it needs; none
 * reaches past it.
 */
export interface LockRuntime {
  /** Where lock state lives: the one node of every mode but redlock (RedLock: each independent master). */
  readonly nodes: readonly LockNode[];
  readonly keys: LockKeys;
  /** This client's random id: the first half of its owner ids, and its waiting mark. */
  readonly clientId: string;
  /** The client's operation timeout: the bound of one Redis round trip. */
  readonly operationTimeoutMs: number;
  /** Every clock read and timer of the client's locks. */
  readonly clock: Clock;
  publishCommand(): PublishCommand;
  /** Callers of this process waiting for the lock behind `channel`. */
  waitersHere(channel: string): number;
  /** A connection for a read that may be stale by design: a replica in turn (master-slave), else the master. */
  staleReader(): RedisCommands;
  /** One bounded read or administrative call; failures become LockBackendError. */
  query<T>(operation: string, name: string, run: () => Promise<T>): Promise<T>;
  /** A round trip bounded by the operation timeout (AbandonedOperation past it). */
  bounded<T>(operation: Promise<T>): Promise<T>;
  /** A failure of work nobody waits for, as a `background-error` event. */
  report(operation: BackgroundOperation, name: string | undefined, error: unknown): void;
  readonly holds: Holds;
  readonly acquisitions: AcquisitionPort;
  inspect(name: string, kind: InspectedLockKind): Promise<LockInspection>;
}

/** The runtime of one client's lock objects, from its engine and its inspector. */
export function createLockRuntime(engine: LockEngine, inspect: (name: string, kind: InspectedLockKind) => Promise<LockInspection>): LockRuntime {
  return {
    nodes: engine.nodes,
    keys: engine.keys,
    clientId: engine.clientId,
    operationTimeoutMs: engine.settings.operationTimeoutMs,
    clock: engine.settings.clock,
    publishCommand: () => engine.publishCommand,
    waitersHere: (channel) => engine.lines.count(channel),
    staleReader: () => engine.staleReader(),
    query: (operation, name, run) => engine.query(operation, name, run),
    bounded: (operation) => engine.roundTrips.bounded(operation),
    report: (operation, name, error) => engine.background.report(operation, name, error),
    holds: engine,
    acquisitions: engine,
    inspect,
  };
}
