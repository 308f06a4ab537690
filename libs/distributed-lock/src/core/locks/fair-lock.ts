import type { LockEngine } from '../engine/lock-engine.js';
import { fairAcquire } from '../scripts/fair-acquire.script.js';
import { fairLeave } from '../scripts/fair-leave.script.js';
import { ExclusiveHashLock } from './exclusive-hash-lock.js';
import type { AttemptArgs, AttemptResult } from './lock-kind.js';

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

  constructor(
    engine: LockEngine,
    name: string,
    readonly queueTimeoutMs = DEFAULT_FAIR_QUEUE_TIMEOUT_MS,
  ) {
    super(engine, name, ':fair', false);
    const line = engine.keys.fairQueue(name);
    this.queueKey = line.queue;
    this.queueDeadlinesKey = line.deadlines;
  }

  override get maxPauseMs(): number {
    return Math.max(1, Math.floor(this.queueTimeoutMs / 3));
  }

  async attempt({ owner, leaseMs, watchdog, replicaAck, willWait }: AttemptArgs): Promise<AttemptResult> {
    const [first, second] = await this.engine.node.run(fairAcquire, {
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
    if (first <= 0) return { acquired: false, ttl: second };
    if (replicaAck) await this.confirmGrant(owner, replicaAck);
    return { acquired: true, token: first, holds: second };
  }

  /** @internal See LockKindContract. */
  async abandon(owner: string): Promise<void> {
    await this.engine.roundTrips.bounded(
      this.engine.node.run(fairLeave, {
        lock: this.id,
        channel: this.channel,
        queue: this.queueKey,
        queueDeadlines: this.queueDeadlinesKey,
        owner,
        publish: this.engine.publishCommand,
      }),
    );
  }

  release(owner: string, all: boolean, expectedHolds?: number): Promise<number> {
    return this.hash.release(owner, all, expectedHolds, false);
  }

  /** Waiters queued right now (live or not yet dropped), for monitoring. */
  async queueLength(): Promise<number> {
    return this.query('queueLength', () => this.engine.redis.zcard(this.queueKey));
  }
}
