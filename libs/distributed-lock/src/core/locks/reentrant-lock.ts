import { getLockContext } from '../context/lock-context.js';
import { LockBackendError } from '../errors/lock-backend.error.js';
import type { LockEngine } from '../lock/lock-engine.js';
import { BaseLock, type AttemptResult } from './base-lock.js';

/**
 * Redisson's RLock: an exclusive lock that its owner (a lock context) may take again. Each
 * acquisition adds a hold, each unlock removes one; the key is deleted and one waiter woken at zero.
 */
export class ReentrantLock extends BaseLock {
  readonly kind = 'reentrant' as const;
  readonly id: string;
  protected readonly channel: string;
  private readonly fenceKey: string;

  constructor(engine: LockEngine, name: string) {
    super(engine, name);
    this.id = engine.keys.lock(name);
    this.fenceKey = engine.keys.fence(name);
    this.channel = engine.keys.channel(name);
  }

  protected async attempt(owner: string, leaseMs: number): Promise<AttemptResult> {
    const [first, second] = await this.engine.scripts.reentrantAcquire(this.id, this.fenceKey, owner, leaseMs);
    return first > 0 ? { acquired: true, token: first, holds: second } : { acquired: false, ttl: second };
  }

  async renew(owner: string, leaseMs: number): Promise<boolean> {
    return (await this.engine.scripts.reentrantRenew(this.id, owner, leaseMs)) === 1;
  }

  release(owner: string, all: boolean): Promise<number> {
    return this.engine.scripts.reentrantRelease(this.id, this.channel, owner, this.engine.publishCommand, all ? 'all' : '1');
  }

  /** Whether anyone holds the lock. */
  async isLocked(): Promise<boolean> {
    return (await this.query('isLocked', () => this.engine.redis.exists(this.id))) === 1;
  }

  /** Whether the current lock context holds it (Redisson: isHeldByCurrentThread). */
  async isHeldByCurrentContext(): Promise<boolean> {
    return (await this.getHoldCount()) > 0;
  }

  /** How many times the current lock context holds it (0 when not held or outside any context). */
  async getHoldCount(): Promise<number> {
    const context = getLockContext();
    if (!context) return 0;
    const [owner, holds] = await this.query('getHoldCount', () => this.engine.redis.hmget(this.id, 'owner', 'holds'));
    return owner === this.engine.ownerOf(context) ? Number(holds) : 0;
  }

  /** Remaining lease in ms; -2 when not locked, -1 when locked without expiry (Redis PTTL). */
  remainTimeToLive(): Promise<number> {
    return this.query('remainTimeToLive', () => this.engine.redis.pttl(this.id));
  }

  /** Deletes the lock whoever holds it and wakes a waiter. True if there was a lock to delete. */
  async forceUnlock(): Promise<boolean> {
    const deleted = await this.query('forceUnlock', () => this.engine.scripts.forceUnlock(this.id, this.channel, this.engine.publishCommand));
    this.engine.markResourceLost(this, 'force-unlocked');
    return deleted === 1;
  }

  private async query<T>(operation: string, run: () => Promise<T>): Promise<T> {
    this.engine.assertOpen(`${operation} "${this.name}"`);
    try {
      return await this.engine.bounded(run());
    } catch (error) {
      throw new LockBackendError(operation, this.name, error);
    }
  }
}
