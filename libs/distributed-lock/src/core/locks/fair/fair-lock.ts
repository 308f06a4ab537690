import type { ReleaseReply } from '../../scripts/lock-script.js';
import type { LockRuntime } from '../../engine/lock-runtime.js';
import { fairAcquire } from './fair-acquire.script.js';
import { fairLeave } from './fair-leave.script.js';
import { ExclusiveHashLock } from '../exclusive/exclusive-hash-lock.js';
import type { AttemptArgs, AttemptResult } from '../lock-kind.js';
import { fairQueueKeys } from './fair-keys.js';
import { FAIR_KIND } from './fair.kind.js';

/** How long a queued waiter's place survives without being refreshed, by default. */
export const DEFAULT_FAIR_QUEUE_TIMEOUT_MS = 5_000;

/**
 * Redisson's RFairLock, crash-safe: a reentrant lock granted in arrival order across processes.
 *
 * - A caller that has to wait takes a ticket in a queue kept in Redis next to the lock. When the lock
 *   is free, only the first live waiter may take it; newcomers queue behind.
 * - Each queued waiter refreshes its entry at least every third of `queueTimeout` while it waits (a
 *   liveness heartbeat, not a poll for the lock: the release itself is heard through the release's
 *   pub/sub message). A waiter that leaves (timeout, abort) removes its entry at once; one that dies
 *   is dropped by the next lock call after `queueTimeout`, so nobody is blocked by a dead waiter for
 *   longer than that. A waiter stalled for longer than `queueTimeout` loses its place and queues again.
 * - Holding, renewal, release, fencing tokens and reentrancy are those of the plain lock (the same
 *   ExclusiveHash), on its own key (`<prefix>{name}:fair`), so a fair and a plain lock of the same
 *   name are different locks. No hand-over: the queue in Redis decides who is next.
 */
export class FairLock extends ExclusiveHashLock {
  readonly kind = 'fair' as const;
  private readonly queueKey: string;
  private readonly queueDeadlinesKey: string;

  /** @internal */
  constructor(
    runtime: LockRuntime,
    name: string,
    readonly queueTimeoutMs = DEFAULT_FAIR_QUEUE_TIMEOUT_MS,
  ) {
    super(runtime, name, FAIR_KIND, false);
    const line = fairQueueKeys(runtime.keys, name);
    this.queueKey = line.queue;
    this.queueDeadlinesKey = line.deadlines;
  }

  /** @internal See LockKindContract. */
  override get maxPauseMs(): number {
    return Math.max(1, Math.floor(this.queueTimeoutMs / 3));
  }

  /** @internal See LockKindContract. */
  async attempt({ owner, leaseMs, watchdog, replicaAck, willWait }: AttemptArgs): Promise<AttemptResult> {
    const reply = await this.runtime.nodes[0]!.run(fairAcquire, {
      lock: this.id,
      fence: this.fenceKey,
      queue: this.queueKey,
      queueDeadlines: this.queueDeadlinesKey,
      owner,
      leaseMs,
      queueTimeoutMs: this.queueTimeoutMs,
      queueOnFailure: willWait,
      watchdog,
    });
    if (reply.acquired && replicaAck) await this.confirmGrant(owner, replicaAck);
    return reply;
  }

  /** @internal See LockKindContract. */
  async abandon(owner: string): Promise<void> {
    await this.runtime.roundTrips.bounded(
      this.runtime.nodes[0]!.run(fairLeave, {
        lock: this.id,
        channel: this.channel,
        queue: this.queueKey,
        queueDeadlines: this.queueDeadlinesKey,
        owner,
        publish: this.runtime.publishCommand(),
      }),
    );
  }

  /** @internal See LeaseResource. */
  release(owner: string, all: boolean, expectedHolds?: number, token?: number): Promise<ReleaseReply> {
    return this.hash.release(owner, all, expectedHolds, undefined, token);
  }

  /** Waiters queued right now (live or not yet dropped), for monitoring. */
  async queueLength(): Promise<number> {
    return this.runtime.query('queueLength', this.name, () => this.runtime.nodes[0]!.redis.zcard(this.queueKey));
  }
}
