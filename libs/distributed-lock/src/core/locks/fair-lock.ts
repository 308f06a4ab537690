import type { ReplicaAck } from '../config/replica-ack.js';
import type { LockEngine } from '../lock/lock-engine.js';
import type { AttemptResult } from './base-lock.js';
import { ReentrantLock } from './reentrant-lock.js';

/** How long a queued waiter's place survives without being refreshed, by default. */
export const DEFAULT_FAIR_QUEUE_TIMEOUT_MS = 5_000;

/**
 * Redisson's RFairLock, crash-safe: a reentrant lock granted in arrival order across processes.
 *
 * - A caller that has to wait takes a ticket in a queue kept in Redis next to the lock. When the lock
 *   is free, only the first live waiter may take it; newcomers queue behind.
 * - Each queued waiter refreshes its entry at least every third of `queueTimeout` while it waits (a
 *   liveness heartbeat, not a poll for the lock: the hand-over itself is woken by the release's
 *   pub/sub message). A waiter that leaves (timeout, abort) removes its entry at once; one that dies
 *   is dropped by the next lock call after `queueTimeout`, so nobody is blocked by a dead waiter for
 *   longer than that. A waiter stalled for longer than `queueTimeout` loses its place and queues again.
 * - Holding, renewal, release, fencing tokens and reentrancy are those of the plain lock, on its own
 *   key (`<prefix>{name}:fair`), so a fair and a plain lock of the same name are different locks.
 */
export class FairLock extends ReentrantLock {
  override readonly kind = 'fair' as const;
  private readonly queueKey: string;
  private readonly queueDeadlinesKey: string;

  constructor(
    engine: LockEngine,
    name: string,
    readonly queueTimeoutMs = DEFAULT_FAIR_QUEUE_TIMEOUT_MS,
  ) {
    super(engine, name, ':fair');
    this.queueKey = `${this.id}:queue`;
    this.queueDeadlinesKey = `${this.id}:queue-deadlines`;
  }

  /** Granted in queue order from Redis: no local hand-over, no turns. */
  override get handsOver(): boolean {
    return false;
  }

  protected override get maxPauseMs(): number {
    return Math.max(1, Math.floor(this.queueTimeoutMs / 3));
  }

  protected override async attempt(owner: string, leaseMs: number, replicaAck: ReplicaAck | undefined, willWait: boolean): Promise<AttemptResult> {
    const [first, second] = await this.engine.node.scripts.fairAcquire(
      this.id,
      this.fenceKey,
      this.queueKey,
      this.queueDeadlinesKey,
      owner,
      leaseMs,
      this.queueTimeoutMs,
      willWait ? '1' : '0',
    );
    if (first <= 0) return { acquired: false, ttl: second };
    await this.confirmGrant(owner, replicaAck);
    return { acquired: true, token: first, holds: second };
  }

  protected override async abandon(owner: string): Promise<void> {
    await this.engine.bounded(
      this.engine.node.scripts.fairLeave(this.id, this.channel, this.queueKey, this.queueDeadlinesKey, owner, this.engine.publishCommand),
    );
  }

  /** Waiters queued right now (live or not yet dropped), for monitoring. */
  async queueLength(): Promise<number> {
    return this.query('queueLength', () => this.engine.redis.zcard(this.queueKey));
  }
}
