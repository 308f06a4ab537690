import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../connection/connection-strategy.js';
import { getLockContext, nextOwnerSequence, type LockContext } from '../context/lock-context.js';
import { LockBackendError } from '../errors/lock-backend.error.js';
import { LockClientClosedError } from '../errors/lock-client-closed.error.js';
import { LockLostError, type LockLostReason } from '../errors/lock-lost.error.js';
import { LockNotHeldError } from '../errors/lock-not-held.error.js';
import type { LockBackgroundErrorEvent, LockEvents } from '../events/lock-events.js';
import type { ReplicaAck } from '../config/replica-ack.js';
import { monotonicNow } from '../util/clock.js';
import { afterTimeout } from '../util/late-timer.js';
import { OperationDeadlines } from '../util/operation-deadlines.js';
import { UnlockNotifier } from '../waiting/unlock-notifier.js';
import type { Waiter } from '../waiting/waiter.js';
import type { SubscriberPort } from '../waiting/subscriber-port.js';
import { LeaseWatchdog } from '../watchdog/lease-watchdog.js';
import { HeldLock } from './held-lock.js';
import { HoldTimes } from './hold-times.js';
import { LockAcquireTimeoutError } from '../errors/lock-acquire-timeout.error.js';
import type { LeaseResource } from './lease-resource.js';
import { AcquiredLock, type LockReleaser } from './lock-handle.js';
import { LockKeys } from './lock-keys.js';
import type { LockNode } from './lock-node.js';

export interface LockEngineSettings {
  keyPrefix: string;
  watchdogTimeoutMs: number;
  operationTimeoutMs: number;
  /** Sharded or plain pub/sub for unlock notifications (decided once the server is known: PubSubSelector). */
  pubsub: { readonly sharded: boolean };
  /** Every lock's default; a lock may override it. */
  replicaAck: ReplicaAck | undefined;
  /** RedLock: the nodes are independent masters and a lock needs a majority of them. */
  quorum: boolean;
  /** See LockClientOptions.handoverTurn. */
  handoverTurnMs: number;
}

/** Who acquires: an owner id, and whether it was made outside any lock context (see LockEngine.byName). */
export interface Owner {
  readonly id: string;
  readonly outsideContext: boolean;
}

/** What the engine does in the background, as reported in `background-error` events. */
export type BackgroundOperation = LockBackgroundErrorEvent['operation'];

/** Thrown inside the engine when a round trip is given up (timeout or caller abort). */
export class AbandonedOperation extends Error {
  constructor(readonly why: 'timeout' | 'aborted') {
    super(why);
  }
}

/**
 * The machinery shared by every lock kind of one client: owner ids, the registry of locks held by
 * this process, lease expiry, the watchdog, the unlock notifier and the bound scripts.
 */
export class LockEngine implements LockReleaser {
  /** Random per client: the first half of every owner id this client writes to Redis. */
  readonly clientId = randomUUID();
  readonly keys: LockKeys;
  readonly notifier: UnlockNotifier;
  private readonly watchdog: LeaseWatchdog;
  private staleReaderIndex = 0;
  private readonly held = new Map<string, HeldLock>();
  /** Held locks taken outside any lock context, by lock (see byName). */
  private readonly heldOutsideContext = new Map<string, Set<HeldLock>>();
  /** Acquisitions in flight per owner and lock, to tell a phantom grant from a concurrent real one. */
  private readonly inFlight = new Map<string, number>();
  /** Best-effort Redis work started in the background; close() lets it finish first. */
  private readonly backgroundWork = new Set<Promise<void>>();
  /** Deadlines of the round trips in flight (operationTimeout). */
  private readonly deadlines: OperationDeadlines;
  private closed = false;
  /** Recent hold durations by lock name, for when to retry a busy lock. */
  private readonly holdTimes = new HoldTimes();

  /**
   * `nodes`: where lock state lives (one node, or RedLock's independent masters). `staleReaders`:
   * replicas that may answer reads that are stale by design (master-slave mode).
   */
  constructor(
    readonly nodes: LockNode[],
    subscriber: SubscriberPort,
    readonly settings: LockEngineSettings,
    readonly events: LockEvents,
    private readonly staleReaders: RedisClient[] = [],
  ) {
    this.keys = new LockKeys(settings.keyPrefix);
    this.notifier = new UnlockNotifier(subscriber, events, this.clientId, settings.handoverTurnMs);
    this.deadlines = new OperationDeadlines(settings.operationTimeoutMs);
    this.watchdog = new LeaseWatchdog(Math.floor(settings.watchdogTimeoutMs / 3), (held) => this.renew(held));
  }

  /** What release scripts publish unlock notifications with. */
  get publishCommand(): 'publish' | 'spublish' {
    return this.settings.pubsub.sharded ? 'spublish' : 'publish';
  }

  /** The node of every mode but redlock (RedLock: the first node, used for plain reads). */
  get node(): LockNode {
    return this.nodes[0]!;
  }

  get redis(): RedisClient {
    return this.node.redis;
  }

  /** A connection for a read that may be stale by design: a replica in turn, else the master. */
  staleReader(): RedisClient {
    if (this.staleReaders.length === 0) return this.redis;
    this.staleReaderIndex = (this.staleReaderIndex + 1) % this.staleReaders.length;
    return this.staleReaders[this.staleReaderIndex]!;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Locks this process holds right now (all owners, all kinds). */
  get heldCount(): number {
    return this.held.size;
  }

  /** Locks the watchdog renews right now. */
  get renewingCount(): number {
    return this.watchdog.size;
  }

  get watchdogTimeoutMs(): number {
    return this.settings.watchdogTimeoutMs;
  }

  assertOpen(operation: string): void {
    if (this.closed) throw new LockClientClosedError(operation);
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
    const holders = this.heldOutsideContext.get(resourceKey(resource));
    if (holders?.size === 1) return { owner: holders.values().next().value!.owner };
    if (holders && holders.size > 1) {
      return { owner: undefined, why: `${holders.size} acquisitions made outside a lock context hold it (a shared read lock), so the name does not say which; release each through its handle` };
    }
    return { owner: undefined, why: 'no lock context is active here, and no acquisition made outside a context holds it in this process' };
  }

  find(owner: string, resource: LeaseResource): HeldLock | undefined {
    return this.held.get(registryKey(owner, resource));
  }

  /** Counts an acquisition by `owner` of `resource` as in flight until the returned function is called. */
  beginAcquisition(owner: string, resource: LeaseResource): () => void {
    const key = registryKey(owner, resource);
    this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
    return () => {
      const left = (this.inFlight.get(key) ?? 1) - 1;
      if (left > 0) this.inFlight.set(key, left);
      else this.inFlight.delete(key);
    };
  }

  /** Acquisitions by `owner` of `resource` in flight right now (the caller's included, if counted). */
  acquisitionsInFlight(owner: string, resource: LeaseResource): number {
    return this.inFlight.get(registryKey(owner, resource)) ?? 0;
  }

  /**
   * Runs one Redis round trip of a lock operation, giving up after the operation timeout or when
   * `signal` aborts (AbandonedOperation). The promise itself keeps running: callers decide what to do
   * with a late reply.
   */
  bounded<T>(operation: Promise<T>, signal?: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let onAbort: (() => void) | undefined;
      /** Settles once, whichever comes first: the reply, the deadline, the abort. */
      const finish = (settle: () => void): void => {
        this.deadlines.done(entry);
        if (onAbort) signal!.removeEventListener('abort', onAbort);
        settle();
      };
      const entry = this.deadlines.track(() => finish(() => reject(new AbandonedOperation('timeout'))));
      if (signal) {
        onAbort = () => finish(() => reject(new AbandonedOperation('aborted')));
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      }
      operation.then(
        (value) => finish(() => resolve(value)),
        (error: unknown) => finish(() => reject(error)),
      );
    });
  }

  /** Records a successful acquisition and returns its handle. */
  register(
    resource: LeaseResource,
    owner: Owner,
    grant: { token: number; holds: number; validityMs: number },
    leaseMs: number,
    startedAt: number,
    watchdog: boolean,
    replicaAck: ReplicaAck | undefined,
  ): AcquiredLock {
    if (this.closed) {
      // A reply that arrived after close() released what this process held: give it back too.
      this.releaseFor(resource, owner.id);
      throw new LockClientClosedError(`acquire lock "${resource.name}"`);
    }
    const { token, holds } = grant;
    const key = registryKey(owner.id, resource);
    const validUntil = startedAt + grant.validityMs;
    let held = this.held.get(key);
    if (held && held.token !== token) {
      // Redis granted a new lifetime: the one we remember expired there before our timer noticed.
      this.markLost(held, 'lease-expired');
      held = undefined;
    }
    if (held) {
      held.holds = holds;
      held.leaseMs = Math.max(held.leaseMs, leaseMs);
      if (watchdog && !held.watchdog) {
        held.watchdog = true;
        this.watchdog.add(held);
      }
      if (validUntil > held.validUntil) {
        held.validUntil = validUntil;
        this.armExpiry(held);
      }
    } else {
      held = new HeldLock(resource, owner.id, token, holds, leaseMs, validUntil, watchdog, startedAt, replicaAck, owner.outsideContext);
      this.held.set(key, held);
      if (held.outsideContext) {
        const id = resourceKey(resource);
        const holders = this.heldOutsideContext.get(id) ?? new Set<HeldLock>();
        holders.add(held);
        this.heldOutsideContext.set(id, holders);
      }
      if (watchdog) this.watchdog.add(held);
      this.armExpiry(held);
    }
    return new AcquiredLock(held, this);
  }

  /** Drops one hold of `held` in Redis. LockNotHeldError if it is no longer ours. */
  async release(held: HeldLock): Promise<void> {
    const name = held.resource.name;
    if (held.releasing) await held.releasing;
    if (!held.active) {
      throw new LockNotHeldError(name, held.lostBecause ? `it was lost before (${held.lostBecause.reason})` : 'it was already released');
    }
    const expected = held.holds;
    const { resource } = held;
    if (expected === 1 && resource.handsOver && !held.replicaAck && !this.closed) {
      const successor = this.notifier.takeSuccessor(resource.channel, held.acquiredAt);
      if (successor) return this.handOver(held, successor.waiter, successor.yieldToOthers, successor.last);
    }
    let remaining: number;
    try {
      remaining = await this.bounded(resource.release(held.owner, false));
    } catch (error) {
      // Unknown outcome (the master died mid-call, a failover...). Retry until it is known, so the
      // lock does not sit in Redis for the rest of its lease, or block its owner's next acquisition.
      this.retryRelease(held, expected);
      throw new LockBackendError('unlock', name, error instanceof AbandonedOperation ? new Error(`no reply within ${this.settings.operationTimeoutMs} ms`) : error);
    }
    if (remaining < 0) {
      this.markLost(held, 'not-owner');
      throw new LockNotHeldError(name, 'its lease ran out or it was force-unlocked, so another owner may hold it now');
    }
    this.released(held, remaining);
  }

  /**
   * Releases `held` by granting it to `successor`, a waiter of this process, in the same round trip.
   * The successor's lease counts from the start of this call (Redis granted it later, so the local
   * deadline is never the later one). A successor that stopped waiting meanwhile gives the lock back.
   */
  private async handOver(held: HeldLock, successor: Waiter, yieldToOthers: boolean, last: boolean): Promise<void> {
    const { resource } = held;
    const handoff = successor.handoff!;
    const target = successor.handoffTarget!;
    const startedAt = monotonicNow();
    let reply: [number, number];
    try {
      reply = await this.bounded(resource.handOver!(held.owner, target.owner, target.leaseMs, yieldToOthers, last));
    } catch (error) {
      // Unknown outcome: the successor looks for itself (if it was granted, its attempt finds it
      // holding the lock and the extra hold is corrected; if it ends without the lock, whatever is
      // held in its name is released); our release is retried as usual.
      if (!handoff.settle({ granted: false, uncertain: true })) this.releaseFor(resource, target.owner);
      successor.notify();
      this.retryRelease(held, 1);
      throw new LockBackendError('unlock', resource.name, error instanceof AbandonedOperation ? new Error(`no reply within ${this.settings.operationTimeoutMs} ms`) : error);
    }
    const [remaining, token] = reply;
    if (remaining === 0 && token > 0) {
      this.released(held, 0);
      if (!handoff.settle({ granted: true, token, startedAt })) this.releaseFor(resource, target.owner);
      successor.notify();
      return;
    }
    handoff.settle({ granted: false });
    if (remaining === 0) {
      // Yielded: granted to the process that has waited longest; ours are queued behind it in Redis
      // and will be told (grant or release) when it is their turn, so the successor sleeps on.
      if (successor.handoff === handoff) successor.handoff = undefined;
      this.released(held, 0);
      return;
    }
    successor.notify();
    if (remaining < 0) {
      this.markLost(held, 'not-owner');
      throw new LockNotHeldError(resource.name, 'its lease ran out or it was force-unlocked, so another owner may hold it now');
    }
    this.released(held, remaining);
  }

  /**
   * Releases every hold `owner` may have on `resource` (owner-checked, so harmless if it has none), in
   * the background: for grants nobody is left to use.
   */
  releaseFor(resource: LeaseResource, owner: string): void {
    this.inBackground('release', resource.name, () => this.bounded(resource.release(owner, true)));
  }

  /**
   * Waits for a retried release of `owner`'s hold on `resource` to settle, so that the owner does not
   * re-enter a lock whose last release may or may not have happened. False if `deadline` came first.
   */
  async settleRelease(owner: string, resource: LeaseResource, deadline: number): Promise<boolean> {
    const pending = this.find(owner, resource)?.releasing;
    if (!pending) return true;
    if (!Number.isFinite(deadline)) {
      await pending;
      return true;
    }
    let cancel: (() => void) | undefined;
    const settled = await Promise.race([
      pending.then(() => true),
      new Promise<boolean>((resolve) => {
        cancel = afterTimeout(Math.max(0, deadline - monotonicNow()), () => resolve(false));
      }),
    ]);
    cancel?.();
    return settled;
  }

  /** The error of a wait that ran out, with when to try again (see HoldTimes). */
  timeoutError(name: string, waitedMs: number, remainingLeaseMs: number): LockAcquireTimeoutError {
    return new LockAcquireTimeoutError(name, waitedMs, this.holdTimes.retryAfterMs(name, remainingLeaseMs, waitedMs, this.settings.watchdogTimeoutMs), remainingLeaseMs);
  }

  /** Applies a release's reply: holds left, and at zero the lock is gone for this owner. */
  private released(held: HeldLock, remaining: number): void {
    held.holds = remaining;
    if (remaining === 0) {
      this.forget(held);
      const heldMs = monotonicNow() - held.acquiredAt;
      this.holdTimes.record(held.resource.name, heldMs);
      this.events.emit('released', { name: held.resource.name, kind: held.resource.kind, heldMs });
    }
  }

  /**
   * Retries a release whose outcome is unknown, with back-off, until it is known or the lease is over
   * (then the key expires by itself). Each retry expects the holds as they were before the lost
   * release, so a release that did go through is not applied twice.
   */
  private retryRelease(held: HeldLock, expected: number): void {
    if (held.watchdog) this.watchdog.delete(held);
    held.releasing = (async () => {
      for (let attempt = 0; held.active && !this.closed && monotonicNow() < held.validUntil; attempt++) {
        await new Promise<void>((resolve) => afterTimeout(Math.min(100 * 2 ** attempt, 1000), resolve));
        if (!held.active || this.closed) return;
        let reply: number;
        try {
          reply = await this.bounded(held.resource.release(held.owner, false, expected));
        } catch (error) {
          this.reportBackground('release', held.resource.name, error);
          continue;
        }
        if (reply === -1) {
          // Gone: the lost release deleted it, or the lease ran out. Either way nothing is held.
          this.released(held, 0);
          return;
        }
        this.released(held, reply === -2 ? expected - 1 : reply);
        if (held.active && held.watchdog) this.watchdog.add(held);
        return;
      }
      if (held.active) this.forget(held);
    })().finally(() => {
      held.releasing = undefined;
    });
  }

  /** The lock is gone for its holder: abort its signal, stop renewing, tell listeners. */
  markLost(held: HeldLock, reason: LockLostReason): void {
    if (!held.active) return;
    this.forget(held);
    const error = new LockLostError(held.resource.name, reason);
    held.abort(error);
    this.events.emit('lost', { name: held.resource.name, kind: held.resource.kind, reason, heldMs: monotonicNow() - held.acquiredAt });
  }

  /** Marks every local holder of `resource` as lost (after a force unlock). */
  markResourceLost(resource: LeaseResource, reason: LockLostReason): void {
    for (const held of [...this.held.values()]) {
      if (held.resource.id === resource.id) this.markLost(held, reason);
    }
  }

  /** Stops renewals, wakes waiters with LockClientClosedError, and releases what this process holds. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.watchdog.stop();
    this.notifier.close();
    const holders = [...this.held.values()];
    await Promise.all(
      holders.map(async (held) => {
        this.markLost(held, 'client-closed');
        try {
          await this.bounded(held.resource.release(held.owner, true));
        } catch (error) {
          this.reportBackground('release', held.resource.name, error);
        }
      }),
    );
    // Waiters woken by the close above leave in the next turns, some with clean-up in Redis (their
    // process's waiting mark): let that go out before the connections close.
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.all([...this.backgroundWork]);
    this.deadlines.stop();
  }

  /** Runs best-effort Redis work in the background: failures are reported as events, close() waits for it. */
  inBackground(operation: BackgroundOperation, name: string, work: () => Promise<unknown>): void {
    const done: Promise<void> = work()
      .then(
        () => undefined,
        (error: unknown) => this.reportBackground(operation, name, error),
      )
      .finally(() => this.backgroundWork.delete(done));
    this.backgroundWork.add(done);
  }

  reportBackground(operation: BackgroundOperation, name: string, error: unknown): void {
    const failure = error instanceof AbandonedOperation ? new Error(`no reply within ${this.settings.operationTimeoutMs} ms`) : error;
    this.events.emit('background-error', { operation, name, error: failure instanceof Error ? failure : new Error(String(failure)) });
  }

  private forget(held: HeldLock): void {
    held.active = false;
    held.cancelExpiry?.();
    held.cancelExpiry = undefined;
    if (held.watchdog) this.watchdog.delete(held);
    const key = registryKey(held.owner, held.resource);
    if (this.held.get(key) === held) this.held.delete(key);
    if (held.outsideContext) {
      const id = resourceKey(held.resource);
      const holders = this.heldOutsideContext.get(id);
      holders?.delete(held);
      if (holders?.size === 0) this.heldOutsideContext.delete(id);
    }
  }

  /**
   * Whether `held` is valid at this instant (see LockHandle): a lease found over, with no renewal in
   * flight that could still lengthen it, is marked lost on the spot, so a process resumed after a
   * pause learns it before the deadline timer has had its turn.
   */
  verify(held: HeldLock): boolean {
    if (!held.active) return false;
    const now = monotonicNow();
    if (now < held.validUntil) return true;
    if (held.expiredAt(now)) this.leaseOver(held);
    return false;
  }

  /**
   * The deadline timer fires in the timers phase, before the I/O callbacks of the same loop turn and
   * before timers due later: after a pause, the signal aborts before code waiting on a later timer or
   * on a reply runs on. Only when a renewal still in flight could have lengthened the lease is the
   * verdict left to the next turn, once its reply (if it came) has been read.
   */
  private armExpiry(held: HeldLock): void {
    held.cancelExpiry?.();
    const timer = setTimeout(() => this.onLeaseDeadline(held), Math.max(0, held.validUntil - monotonicNow()));
    timer.unref();
    held.cancelExpiry = () => clearTimeout(timer);
  }

  private onLeaseDeadline(held: HeldLock): void {
    held.cancelExpiry = undefined;
    if (!held.active) return;
    const now = monotonicNow();
    if (now < held.validUntil) this.armExpiry(held);
    else if (held.expiredAt(now)) this.leaseOver(held);
    else held.cancelExpiry = afterTimeout(0, () => this.onLeaseDeadline(held));
  }

  /** The lease ran out: lost for the holder; free the key if it is still ours for a moment. */
  private leaseOver(held: HeldLock): void {
    this.markLost(held, 'lease-expired');
    // Our deadline is never later than Redis's: if the key is still ours for a moment, free it now
    // so that waiters do not sit out the rest of the lease. Owner-checked, so harmless otherwise.
    this.inBackground('release', held.resource.name, () => this.bounded(held.resource.release(held.owner, true)));
  }

  /**
   * One watchdog renewal of one lock, bounded by the operation timeout, so that a stalled node (a
   * master failing over) holds up only the locks it serves: the watchdog skips a lock whose renewal
   * is still in flight, and renews the others on time.
   */
  private async renew(held: HeldLock): Promise<void> {
    const startedAt = monotonicNow();
    held.renewingSince = startedAt;
    try {
      const result = await this.bounded(held.resource.renew(held.owner, held.leaseMs, held.replicaAck));
      if (!held.active) return;
      if (!result.renewed) {
        // Lost: stop now. Unconfirmed: keep the old deadline; the next round may confirm.
        if (result.lost) this.markLost(held, 'not-owner');
        return;
      }
      held.validUntil = Math.max(held.validUntil, startedAt + result.validityMs);
      this.armExpiry(held);
      this.events.emit('renewed', { name: held.resource.name, kind: held.resource.kind, leaseMs: held.leaseMs, tookMs: monotonicNow() - startedAt });
    } catch (error) {
      this.reportBackground('renew', held.resource.name, error);
    } finally {
      if (held.renewingSince === startedAt) held.renewingSince = undefined;
    }
  }
}

function resourceKey(resource: LeaseResource): string {
  return `${resource.kind}\u0000${resource.id}`;
}

function registryKey(owner: string, resource: LeaseResource): string {
  return `${owner}\u0000${resourceKey(resource)}`;
}
