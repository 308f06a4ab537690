import type { ReplicaAck } from '../config/replica-ack.js';
import type { RedisCommands, RedisPort } from '../redis/redis-port.js';
import { getLockContext, nextOwnerSequence, type LockContext } from '../context/lock-context.js';
import { LockAcquireTimeoutError } from '../errors/lock-acquire-timeout.error.js';
import { LockClientClosedError } from '../errors/lock-client-closed.error.js';
import { LockLostError, type LockLostReason } from '../errors/lock-lost.error.js';
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

export interface LockEngineSettings {
  keyPrefix: string;
  watchdogTimeoutMs: number;
  operationTimeoutMs: number;
  /** Sharded or plain pub/sub for unlock notifications (decided once the server is known: PubSubSelector). */
  pubsub: { readonly sharded: boolean };
  /** Every lock's default; a lock may override it. */
  replicaAck: ReplicaAck | undefined;
  /** Every script's keys in one hash slot (the fencing counter per slot) although the client is not a cluster client. */
  oneSlotPerScript?: boolean;
  /** Every clock read and timer of the client's locks. */
  clock: Clock;
}

/** Who acquires: an owner id, and whether it was made outside any lock context (see LockEngine.byName). */
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
 * What one client's locks share, assembled from parts with one job each: the registry of held locks
 * (HeldLocks), bounded round trips (RoundTrips), the leases (LeaseKeeper), the release protocol
 * (ReleaseProtocol), background work, and this process's lock lines (waiting/). It owns what ties
 * them together: owner ids, registering an acquisition, losing a lock, and closing.
 */
export class LockEngine implements LockReleaser {
  readonly keys: LockKeys;
  readonly roundTrips: RoundTrips;
  readonly background: BackgroundWork;
  readonly held: HeldLocks;
  readonly releases: ReleaseProtocol;
  private readonly leases: LeaseKeeper;
  /** Recent hold durations by lock name, for when to retry a busy lock. */
  private readonly holdTimes = new HoldTimes();
  private staleReaderIndex = 0;
  private closed = false;

  /**
   * `nodes`: where lock state lives (one node, or RedLock's independent masters). `lines`: this
   * process's waiting callers (built with this engine's clientId). `staleReaders`: replicas that may
   * answer reads that are stale by design (master-slave mode). `announce`: called at each acquisition
   * (this process's label for inspection is written once, at the first).
   */
  constructor(
    readonly clientId: string,
    readonly nodes: LockNode[],
    readonly lines: LockLines,
    readonly settings: LockEngineSettings,
    readonly events: LockEvents,
    readonly announce: () => void,
    private readonly staleReaders: RedisCommands[] = [],
  ) {
    this.keys = new LockKeys(settings.keyPrefix, settings.oneSlotPerScript === true || nodes[0]!.redis.isCluster);
    this.held = new HeldLocks(settings.clock);
    this.roundTrips = new RoundTrips(settings.operationTimeoutMs, settings.clock);
    this.background = new BackgroundWork(events, this.roundTrips);
    this.leases = new LeaseKeeper(
      settings.watchdogTimeoutMs,
      this.roundTrips,
      this.background,
      events,
      (held, reason) => this.markLost(held, reason),
      (held) => this.held.acquisitionsInFlight(held.key) > 0,
    );
    this.releases = new ReleaseProtocol(this.roundTrips, this.background, this.lines, this.leases, this.held, {
      released: (held, remaining) => this.released(held, remaining),
      lost: (held, reason) => this.markLost(held, reason),
      handedOver: (held, to) => {
        // Only when someone listens (the metrics): no allocation per hand-over otherwise.
        if (this.events.listenerCount('handover') > 0) this.events.emit('handover', { name: held.resource.name, kind: held.resource.kind, to });
      },
      isClosed: () => this.closed,
    });
  }

  /** What release scripts publish unlock notifications with. */
  get publishCommand(): 'publish' | 'spublish' {
    return this.settings.pubsub.sharded ? 'spublish' : 'publish';
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

  assertOpen(operation: string): void {
    if (this.closed) throw new LockClientClosedError(operation);
  }

  /** One bounded read or administrative call of `operation` on lock `name`; failures become LockBackendError. */
  async query<T>(operation: string, name: string, run: () => Promise<T>): Promise<T> {
    this.assertOpen(`${operation} "${name}"`);
    try {
      return await this.roundTrips.bounded(run());
    } catch (error) {
      throw this.roundTrips.failure(operation, name, error);
    }
  }

  ownerOf(context: LockContext): string {
    return `${this.clientId}:${context.id}`;
  }

  /** Who an acquisition made here is for: the current lock context, or a fresh owner outside any context. */
  currentOwner(): Owner {
    const context = getLockContext();
    return context ? { id: this.ownerOf(context), outsideContext: false } : { id: `${this.clientId}:${nextOwnerSequence()}`, outsideContext: true };
  }

  /**
   * Who a by-name call (unlock, getHoldCount) acts for: the current lock context's owner; outside any
   * context, the one acquisition made outside a context that holds `resource` in this process (an
   * exclusive lock has at most one). With none, or several (readers of a read lock), there is no
   * owner to act for, and `why` says so.
   */
  byName(resource: LeaseResource): { owner: string } | { owner: undefined; why: string } {
    const context = getLockContext();
    if (context) return { owner: this.ownerOf(context) };
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
      this.markLost(held, 'lease-expired');
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
      this.holdTimes.retryAfterMs(name, remainingLeaseMs, waitedMs, this.settings.watchdogTimeoutMs),
      remainingLeaseMs,
      busy,
    );
  }

  /** The lock is gone for its holder: abort its signal, stop renewing, tell listeners. */
  markLost(held: HeldLock, reason: LockLostReason): void {
    if (!held.active) return;
    this.forget(held);
    held.abort(new LockLostError(held.resource.name, reason));
    this.events.emit('lost', {
      name: held.resource.name,
      kind: held.resource.kind,
      reason,
      heldMs: this.settings.clock.now() - held.acquiredAt,
      token: held.token,
    });
  }

  /** Marks every local holder of `resource` as lost (after a force unlock). */
  markResourceLost(resource: LeaseResource, reason: LockLostReason): void {
    for (const held of this.held.holdersOf(resource)) this.markLost(held, reason);
  }

  /**
   * Stops renewals, wakes waiters with LockClientClosedError, and releases what this process holds.
   * Ends within one operation timeout, Redis up or down: what Redis has not answered by then (releases,
   * withdrawals, retries) is given up, and said once, as a `background-error` event of operation `close`.
   * A lock whose release is given up stays in Redis until its lease runs out (nobody renews it).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const closeBy = this.settings.clock.now() + this.settings.operationTimeoutMs;
    this.leases.stop();
    this.lines.close();
    for (const held of this.held.all()) {
      this.markLost(held, 'client-closed');
      this.background.run('release', held.resource.name, () => this.roundTrips.bounded(held.resource.release(held.owner, true, undefined, held.token)));
    }
    // Waiters woken by the close above leave in the next turns, some with clean-up in Redis (their
    // process's waiting mark): let that start before waiting for the background work.
    await new Promise<void>((resolve) => this.settings.clock.soon(resolve));
    const unfinished = await this.background.settledBy(closeBy);
    this.roundTrips.stop();
    if (unfinished.size > 0) {
      const what = [...unfinished].map(([operation, count]) => `${count} ${operation}`).join(', ');
      this.events.emit('background-error', {
        operation: 'close',
        error: new Error(
          `close() gave up on work Redis did not answer within the operation timeout (${this.settings.operationTimeoutMs} ms): ${what}. ` +
            'Locks whose release was given up stay in Redis until their leases run out.',
        ),
      });
    }
  }

  /** A release's reply: holds left, and at zero the lock is gone for this owner. */
  private released(held: HeldLock, remaining: number): void {
    held.holds = remaining;
    if (remaining !== 0) return;
    this.forget(held);
    const heldMs = this.settings.clock.now() - held.acquiredAt;
    this.holdTimes.record(held.resource.name, heldMs);
    if (this.events.listenerCount('released') > 0)
      this.events.emit('released', { name: held.resource.name, kind: held.resource.kind, heldMs, token: held.token });
  }

  private forget(held: HeldLock): void {
    held.active = false;
    this.leases.stopKeeping(held);
    this.held.remove(held);
  }
}
