import type { ReplicaAck } from '../config/replica-ack.js';
import type { RedisCommands, RedisPort } from '../redis/redis-port.js';
import { getLockContext, nextOwnerSequence } from '../context/lock-context.js';
import { LockAcquireTimeoutError } from '../errors/lock-acquire-timeout.error.js';
import { LockClientClosedError } from '../errors/lock-client-closed.error.js';
import type { LockLostReason } from '../errors/lock-lost.error.js';
import type { LockEvents } from '../events/lock-events.js';
import type { Clock } from '../util/clock.js';
import type { LockLines } from '../waiting/lock-lines.js';
import { BackgroundWork } from './background-work.js';
import { HeldLock, HeldLocks, type RegistryKey } from './held-locks.js';
import { HoldTimes } from './hold-times.js';
import type { LeaseResource } from './lease-resource.js';
import { LeaseKeeper } from './lease-keeper.js';
import { HeldLockHandle, type LockReleaser } from './held-lock-handle.js';
import { LockKeys } from '../scripts/lock-keys.js';
import type { LockNode } from '../connection/lock-node.js';
import { ReleaseProtocol } from './release-protocol.js';
import { RoundTrips } from './round-trips.js';
import type { HoldTerms, LockRuntime, Owner } from './lock-runtime.js';
import { InstanceRegistration } from '../inspection/instance-registration.js';
import { LockInspector } from '../inspection/lock-inspector.js';
import type { LockInspectionScript } from '../inspection/inspect-lock.script.js';
import type { InspectedLockKind, LockInspection } from '../inspection/lock-inspection.js';
import type { PublishCommand } from '../scripts/lock-script.js';

/** What a client's engine is built from (LockClient's composition root gives it). */
export interface LockEngineOptions extends Pick<
  LockRuntime,
  'clientId' | 'nodes' | 'events' | 'clock' | 'watchdogTimeoutMs' | 'operationTimeoutMs' | 'replicaAck'
> {
  /** This process's waiting callers (built with the same clientId). */
  readonly lines: LockLines;
  readonly keyPrefix: string;
  /** Sharded or plain pub/sub for unlock notifications (decided once the server is known: PubSubSelector). */
  readonly pubsub: { readonly sharded: boolean };
  /** Every script's keys in one hash slot (the fencing counter per slot) although the client is not a cluster client. */
  readonly oneSlotPerScript?: boolean;
  /** This process's label in inspection (see InstanceRegistration). */
  readonly instanceName?: string;
  /** Replicas that may answer reads that are stale by design (master-slave mode). */
  readonly staleReaders?: readonly RedisCommands[];
  /** The inspection script, assembled from the lock kinds' parts (see lock-scripts.ts). */
  readonly inspection: LockInspectionScript;
}

/**
 * What one client's locks share, assembled from parts with one job each: the registry of held locks
 * (HeldLocks), bounded round trips (RoundTrips), the leases (LeaseKeeper), the release protocol
 * (ReleaseProtocol), background work, this process's lock lines (waiting/), its label for inspection
 * (InstanceRegistration) and the inspector. It owns what ties them together: owner ids, registering an
 * acquisition, losing a lock, and closing. Lock objects see it as their LockRuntime.
 */
export class LockEngine implements LockRuntime, LockReleaser {
  readonly clientId: string;
  readonly nodes: readonly LockNode[];
  readonly lines: LockLines;
  readonly events: LockEvents;
  readonly clock: Clock;
  readonly watchdogTimeoutMs: number;
  readonly operationTimeoutMs: number;
  readonly replicaAck: ReplicaAck | undefined;
  readonly keys: LockKeys;
  readonly roundTrips: RoundTrips;
  readonly background: BackgroundWork;
  readonly held: HeldLocks;
  readonly releases: ReleaseProtocol;
  /** This process's label for lock inspection, written when it first takes part in locking. */
  readonly instance: InstanceRegistration;
  readonly inspector: LockInspector;
  private readonly leases: LeaseKeeper;
  /** Recent hold durations by lock name, for when to retry a busy lock. */
  private readonly holdTimes = new HoldTimes();
  private readonly pubsub: { readonly sharded: boolean };
  private readonly staleReaders: readonly RedisCommands[];
  private staleReaderIndex = 0;
  private closed = false;

  constructor(options: LockEngineOptions) {
    ({ clientId: this.clientId, nodes: this.nodes, lines: this.lines, events: this.events, clock: this.clock } = options);
    ({ watchdogTimeoutMs: this.watchdogTimeoutMs, operationTimeoutMs: this.operationTimeoutMs, replicaAck: this.replicaAck, pubsub: this.pubsub } = options);
    this.staleReaders = options.staleReaders ?? [];
    this.keys = new LockKeys(options.keyPrefix, options.oneSlotPerScript === true || this.node.redis.isCluster);
    this.held = new HeldLocks(this.clock);
    this.roundTrips = new RoundTrips(this.operationTimeoutMs, this.clock);
    this.background = new BackgroundWork(this.events, this.roundTrips);
    this.leases = new LeaseKeeper({
      watchdogTimeoutMs: this.watchdogTimeoutMs,
      roundTrips: this.roundTrips,
      background: this.background,
      events: this.events,
      registry: this.held,
      holdTimes: this.holdTimes,
    });
    this.releases = new ReleaseProtocol(this.roundTrips, this.background, this.lines, this.leases, this.held, this.events);
    this.instance = new InstanceRegistration(this.node.redis, options.keyPrefix, this.clientId, options.instanceName, this.clock, (error) =>
      this.background.report('register', undefined, error),
    );
    this.inspector = new LockInspector({
      node: this.node,
      keys: this.keys,
      clientId: this.clientId,
      inspection: options.inspection,
      waitedMs: (channel) => this.lines.waitedMs(channel),
      query: (operation, name, run) => this.query(operation, name, run),
    });
  }

  /** What release scripts publish unlock notifications with. */
  publishCommand(): PublishCommand {
    return this.pubsub.sharded ? 'spublish' : 'publish';
  }

  /** The node of every mode but redlock (RedLock: the first node, used for plain reads). */
  get node(): LockNode {
    return this.nodes[0]!;
  }

  get redis(): RedisPort {
    return this.node.redis;
  }

  /** A connection for a read that may be stale by design: a replica in turn, else the master. */
  staleReader(): RedisCommands {
    if (this.staleReaders.length === 0) return this.redis;
    this.staleReaderIndex = (this.staleReaderIndex + 1) % this.staleReaders.length;
    return this.staleReaders[this.staleReaderIndex]!;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Locks the watchdog renews right now. */
  get renewingCount(): number {
    return this.leases.renewing;
  }

  assertOpen(operation: string, name?: string): void {
    if (this.closed) throw new LockClientClosedError(name === undefined ? operation : `${operation} "${name}"`);
  }

  /** One bounded read or administrative call of `operation` on lock `name`; failures become LockBackendError. */
  async query<T>(operation: string, name: string, run: () => Promise<T>): Promise<T> {
    this.assertOpen(operation, name);
    try {
      return await this.roundTrips.bounded(run());
    } catch (error) {
      throw this.roundTrips.failure(operation, name, error);
    }
  }

  /** Who an acquisition made here is for: the current lock context, or a fresh owner outside any context. */
  currentOwner(): Owner {
    const context = getLockContext();
    return context ? { id: `${this.clientId}:${context.id}`, outsideContext: false } : { id: `${this.clientId}:${nextOwnerSequence()}`, outsideContext: true };
  }

  /**
   * Who a by-name call (unlock, getHoldCount) acts for: the current lock context's owner; outside any
   * context, the one acquisition made outside a context that holds `resource` in this process (an
   * exclusive lock has at most one). With none, or several (readers of a read lock), there is no
   * owner to act for, and `why` says so.
   */
  byName(resource: LeaseResource): { owner: string } | { owner: undefined; why: string } {
    const context = getLockContext();
    if (context) return { owner: `${this.clientId}:${context.id}` };
    const holders = this.held.heldOutsideContext(resource);
    if (holders.length === 1) return { owner: holders[0]!.owner };
    if (holders.length > 1) {
      return {
        owner: undefined,
        why: `${holders.length} acquisitions made outside a lock context hold it (a shared read lock), so the name does not say which; release each through its handle`,
      };
    }
    return { owner: undefined, why: 'no lock context is active here, and no acquisition made outside a context holds it in this process' };
  }

  /** Records a successful acquisition and returns its handle. */
  register(terms: HoldTerms): HeldLockHandle {
    const { resource, owner } = terms;
    if (this.closed) {
      // A reply that arrived after close() released what this process held: give it back too.
      this.releases.releaseFor(resource, owner.id);
      throw new LockClientClosedError(`acquire lock "${resource.name}"`);
    }
    const validUntil = terms.startedAt + this.leases.validity(terms.validityMs);
    let held = this.held.find(terms.key);
    if (held && held.token !== terms.token) {
      // Redis granted a new lifetime: the one we remember expired there before our timer noticed.
      this.leases.lose(held, 'lease-expired');
      held = undefined;
    }
    if (held) {
      held.holds = terms.holds;
      held.leaseMs = Math.max(held.leaseMs, terms.leaseMs);
      this.leases.extend(held, validUntil, terms.watchdog);
    } else {
      held = new HeldLock({
        resource,
        owner: owner.id,
        token: terms.token,
        holds: terms.holds,
        leaseMs: terms.leaseMs,
        validUntil,
        watchdog: terms.watchdog,
        acquiredAt: terms.startedAt,
        replicaAck: terms.replicaAck,
        outsideContext: owner.outsideContext,
      });
      this.held.add(held);
      this.leases.keep(held);
    }
    return new HeldLockHandle(held, this);
  }

  /** Called at each acquisition: this process's label for inspection is written at the first. */
  announce(): void {
    this.instance.announce();
  }

  /** The lock `name` as `kind` sees it (see LockInspector). */
  inspect(name: string, kind?: InspectedLockKind): Promise<LockInspection> {
    return this.inspector.inspect(name, kind);
  }

  /** Claims the permits `key` holds by a grant's message (see LeaseKeeper.claim). */
  claim(key: RegistryKey): void {
    const held = this.held.find(key);
    if (held?.active) this.leases.claim(held);
  }

  /** The earliest local time at which the lock node's server may have read `serverMs` (see LockNode.localTimeOf). */
  localTimeOf(serverMs: number): number | undefined {
    return this.node.localTimeOf(serverMs);
  }

  /** Drops one hold of `held` (LockReleaser): see ReleaseProtocol. */
  release(held: HeldLock): Promise<void> {
    return this.releases.release(held);
  }

  /** Whether `held` is valid at this instant (LockReleaser): see LeaseKeeper.verify. */
  verify(held: HeldLock): boolean {
    return this.leases.verify(held);
  }

  /** The error of a wait that ran out, with when to try again (see HoldTimes); `busy`: what stayed busy (see LockAcquireTimeoutError). */
  timeoutError(name: string, waitedMs: number, remainingLeaseMs: number, busy?: string): LockAcquireTimeoutError {
    this.holdTimes.follow(name);
    return new LockAcquireTimeoutError(
      name,
      waitedMs,
      this.holdTimes.retryAfterMs(name, remainingLeaseMs, waitedMs, this.watchdogTimeoutMs),
      remainingLeaseMs,
      busy,
    );
  }

  /** Marks every local holder of `resource` as lost (after a force unlock). */
  markResourceLost(resource: LeaseResource, reason: LockLostReason): void {
    for (const held of this.held.holdersOf(resource)) this.leases.lose(held, reason);
  }

  /**
   * Stops renewals, wakes waiters with LockClientClosedError, and releases what this process holds.
   * Ends within one operation timeout, Redis up or down: what Redis has not answered by then (releases,
   * withdrawals, retries) is given up, and said once, as a `background-error` event of operation `close`.
   * A lock whose release is given up stays in Redis until its lease runs out (nobody renews it).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    // This process's label goes with the rest of the close, within the same bound.
    this.background.run('register', undefined, () => this.roundTrips.bounded(this.instance.stop()));
    this.closed = true;
    this.releases.close();
    const closeBy = this.clock.now() + this.operationTimeoutMs;
    this.leases.stop();
    this.lines.close();
    for (const held of this.held.all()) {
      this.leases.lose(held, 'client-closed');
      this.background.run('release', held.resource.name, () => this.roundTrips.bounded(held.resource.release(held.owner, true, undefined, held.token)));
    }
    // Waiters woken by the close above leave in the next turns, some with clean-up in Redis (their
    // process's waiting mark): let that start before waiting for the background work.
    await new Promise<void>((resolve) => this.clock.soon(resolve));
    const unfinished = await this.background.settledBy(closeBy);
    this.roundTrips.stop();
    if (unfinished.size > 0) {
      const what = [...unfinished].map(([operation, count]) => `${count} ${operation}`).join(', ');
      this.events.emit('background-error', {
        operation: 'close',
        error: new Error(
          `close() gave up on work Redis did not answer within the operation timeout (${this.operationTimeoutMs} ms): ${what}. ` +
            'Locks whose release was given up stay in Redis until their leases run out.',
        ),
      });
    }
  }
}
