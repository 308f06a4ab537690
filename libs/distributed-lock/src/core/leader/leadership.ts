import type { LockHandle } from '../context/lock-handle.js';
import type { LockLostReason } from '../errors/lock-lost.error.js';

/**
 * One term of leadership, as the leader sees it. The term is the leadership lock's fencing token:
 * every new leader's term is higher than every earlier one's, so a resource that refuses writes
 * fenced with a lower term than it has seen refuses a deposed leader's late writes.
 *
 * Checking before acting: `isLeader` and `throwIfLost()` read the lease's deadline at the moment
 * they are called (as a lock handle does), so a leader resumed after a pause longer than its lease
 * learns it before it acts again; `signal` aborts when the term ends (lease lost, resigned, stepped
 * down, client closed), with a LockLostError whose `reason` says why.
 */
export class Leadership {
  constructor(
    /** The election's name. */
    readonly name: string,
    private readonly handle: LockHandle,
    /** Aborted (reason: LockLostError) when this term ends. */
    readonly signal: AbortSignal,
  ) {}

  /** The term: the leadership lock's fencing token. Send it with every write only the leader may make. */
  get term(): number {
    return this.handle.token;
  }

  /** True while this term is known to last at this instant: not ended, lease not over. */
  get isLeader(): boolean {
    return !this.signal.aborted && this.handle.isHeld;
  }

  /** Throws (a LockLostError) unless this term is known to last at this instant. Call it right before acting. */
  throwIfLost(): void {
    if (this.signal.aborted) throw this.signal.reason;
    this.handle.throwIfLost();
  }

  toJSON(): { name: string; term: number; isLeader: boolean } {
    return { name: this.name, term: this.term, isLeader: this.isLeader };
  }
}

/** A term that ended, as onRevoked and the `revoked` event tell it. */
export interface LeadershipRevoked {
  readonly name: string;
  readonly term: number;
  /**
   * `resigned`: this candidate gave it up (resign(), the application closing, or onElected's work
   * ended with stepDownWhenDone); `client-closed`: the lock client closed; the others: the lease was
   * lost (`lease-expired`: a pause or Redis unreachable for longer than the lease; `not-owner`,
   * `force-unlocked`), and another candidate may lead already.
   */
  readonly reason: LockLostReason;
}
