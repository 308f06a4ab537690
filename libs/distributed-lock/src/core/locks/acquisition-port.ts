import type { BackgroundWork } from '../engine/background-work.js';
import type { HeldLockHandle } from '../engine/held-lock-handle.js';
import type { HeldLocks, RegistryKey } from '../engine/held-locks.js';
import type { HoldTerms, LockEngineSettings } from '../engine/lock-engine.js';
import type { ReleaseProtocol } from '../engine/release-protocol.js';
import type { RoundTrips } from '../engine/round-trips.js';
import type { LockEvents } from '../events/lock-events.js';
import type { LockLines } from '../waiting/lock-lines.js';

/**
 * What an acquisition needs, and all it may touch (the engine provides it; unit specs fake it): the
 * client's settings, its lines of waiting callers, the registry of held locks, releases, bounded round
 * trips, background work, events, and registering what it acquired.
 */
export interface AcquisitionPort {
  readonly settings: Pick<LockEngineSettings, 'watchdogTimeoutMs' | 'operationTimeoutMs' | 'replicaAck' | 'clock'>;
  readonly events: LockEvents;
  readonly lines: Pick<LockLines, 'count' | 'join'>;
  readonly held: Pick<HeldLocks, 'beginAcquisition' | 'find' | 'acquisitionsInFlight'>;
  readonly releases: Pick<ReleaseProtocol, 'settled' | 'releaseFor'>;
  readonly roundTrips: Pick<RoundTrips, 'bounded' | 'failure'>;
  readonly background: Pick<BackgroundWork, 'run' | 'report'>;
  readonly isClosed: boolean;
  assertOpen(operation: string): void;
  /** Called at each acquisition: this process's label for inspection is written at the first. */
  announce(): void;
  register(terms: HoldTerms): HeldLockHandle;
  /** Claims, in the background, the permits this owner holds by a grant's message (see LeaseKeeper.claim). */
  claim(key: RegistryKey): void;
  /** The earliest local time at which the lock's node read `serverMs`, if its clock bounds it (see LockNode.localTimeOf). */
  localTimeOf(serverMs: number): number | undefined;
}

/** What an acquisition comes to: the handle, or the holder's remaining lease when the wait ran out. */
export type AcquireOutcome = HeldLockHandle | { ttl: number };
