import type { ReplicaAck } from '../config/replica-ack.js';
import type { LockNode } from '../connection/lock-node.js';
import type { LockAcquireTimeoutError } from '../errors/lock-acquire-timeout.error.js';
import type { LockLostReason } from '../errors/lock-lost.error.js';
import type { LockEvents } from '../events/lock-events.js';
import type { InspectedLockKind, LockInspection } from '../inspection/lock-inspection.js';
import type { RedisCommands } from '../redis/redis-port.js';
import type { LockKeys } from '../scripts/lock-keys.js';
import type { PublishCommand } from '../scripts/lock-script.js';
import type { Clock } from '../util/clock.js';
import type { LockLines } from '../waiting/lock-lines.js';
import type { BackgroundWork } from './background-work.js';
import type { HeldLockHandle } from './held-lock-handle.js';
import type { HeldLock, HeldLocks, RegistryKey } from './held-locks.js';
import type { LeaseResource } from './lease-resource.js';
import type { ReleaseProtocol } from './release-protocol.js';
import type { RoundTrips } from './round-trips.js';

/** Who acquires: an owner id, and whether it was made outside any lock context (see LockRuntime.byName). */
export interface Owner {
  readonly id: string;
  readonly outsideContext: boolean;
}

/** What a successful acquisition establishes, for `register` (one owner's hold on one lock). */
export interface HoldTerms {
  readonly resource: LeaseResource;
  readonly owner: Owner;
  /** registryKey(owner.id, resource), as the acquisition computed it. */
  readonly key: RegistryKey;
  readonly token: number;
  readonly holds: number;
  readonly leaseMs: number;
  /** How long the hold is valid, counted from `startedAt` (the start of the round trip that got it). */
  readonly validityMs: number;
  readonly startedAt: number;
  readonly watchdog: boolean;
  readonly replicaAck: ReplicaAck | undefined;
}

/**
 * The one view of a client's engine that its lock objects (BaseLock and the kinds, semaphores,
 * multi-locks) and their acquisitions (Acquisition) use: where their scripts run and how their keys
 * are named, the client's settings and clock, bounded round trips and background work, this process's
 * lines of waiting callers and registry of held locks, who owns an acquisition, registering and
 * releasing a hold, and inspection. LockEngine implements it; unit specs fake the part they need.
 */
export interface LockRuntime {
  /** This client's random id: the first half of its owner ids, and its waiting mark. */
  readonly clientId: string;
  /** Where lock state lives: the one node of every mode but redlock (RedLock: each independent master). */
  readonly nodes: readonly LockNode[];
  readonly keys: LockKeys;
  /** Every clock read and timer of the client's locks. */
  readonly clock: Clock;
  /** The lease without leaseTime, renewed every third of it. */
  readonly watchdogTimeoutMs: number;
  /** The bound of one Redis round trip. */
  readonly operationTimeoutMs: number;
  /** Every lock's default; a lock may override it. */
  readonly replicaAck: ReplicaAck | undefined;
  readonly events: LockEvents;
  readonly roundTrips: Pick<RoundTrips, 'bounded' | 'failure'>;
  readonly background: Pick<BackgroundWork, 'run' | 'report' | 'acquisitionStarted' | 'acquisitionEnded'>;
  readonly lines: Pick<LockLines, 'count' | 'join' | 'firstWaiting'>;
  readonly held: Pick<HeldLocks, 'beginAcquisition' | 'find' | 'acquisitionsInFlight'>;
  readonly releases: Pick<ReleaseProtocol, 'settled' | 'unsettled' | 'releaseFor'>;
  readonly isClosed: boolean;
  /**
   * LockClientClosedError once the client is closed, for `operation` (on lock `name`: the message is
   * built only then, not on every call).
   */
  assertOpen(operation: string, name?: string): void;
  /** What release scripts publish unlock notifications with (known once the server is). */
  publishCommand(): PublishCommand;
  /** A connection for a read that may be stale by design: a replica in turn (master-slave), else the master. */
  staleReader(): RedisCommands;
  /** One bounded read or administrative call; failures become LockBackendError. */
  query<T>(operation: string, name: string, run: () => Promise<T>): Promise<T>;
  /** Who an acquisition made here is for: the current lock context, or a fresh owner outside any context. */
  currentOwner(): Owner;
  /** Who a by-name call (unlock, getHoldCount) acts for, or why nobody. */
  byName(resource: LeaseResource): { owner: string } | { owner: undefined; why: string };
  /** Called at each acquisition: this process's label for inspection is written at the first. */
  announce(): void;
  /** Records a successful acquisition and returns its handle. */
  register(terms: HoldTerms): HeldLockHandle;
  /** Claims, in the background, the permits this owner holds by a grant's message (see LeaseKeeper.claim). */
  claim(key: RegistryKey): void;
  /** Drops one hold (see ReleaseProtocol.release). */
  release(held: HeldLock): Promise<void>;
  /** Marks every local holder of `resource` as lost (after a force unlock). */
  markResourceLost(resource: LeaseResource, reason: LockLostReason): void;
  /** The earliest local time at which the lock's node read `serverMs`, if its clock bounds it (see LockNode.localTimeOf). */
  localTimeOf(serverMs: number): number | undefined;
  /** The error of a wait that ran out, with when to try again; `busy`: what stayed busy. */
  timeoutError(name: string, waitedMs: number, remainingLeaseMs: number, busy?: string): LockAcquireTimeoutError;
  /** The lock `name` as `kind` sees it, read in one script (see LockInspector). */
  inspect(name: string, kind: InspectedLockKind): Promise<LockInspection>;
}
