import type { HandOverArgs, LockHandover } from '../engine/lease-resource.js';
import type { LockEngine } from '../engine/lock-engine.js';
import { reentrantAcquire } from '../scripts/reentrant-acquire.script.js';
import { reentrantHandover } from '../scripts/reentrant-handover.script.js';
import { reentrantWithdraw } from '../scripts/reentrant-withdraw.script.js';
import { GRANT_LEASE_MS } from '../waiting/unlock-notifier.js';
import { ExclusiveHashLock } from './exclusive-hash-lock.js';
import type { AttemptArgs, AttemptResult } from './lock-kind.js';

/**
 * Redisson's RLock: an exclusive lock that its owner (a lock context) may take again. Each
 * acquisition adds a hold, each unlock removes one; at zero the lock goes to the next holder. Lives on
 * one node: a single Redis, the master of a master-slave or sentinel set, or the master of the lock's
 * slot in a cluster.
 *
 * It hands over (LockHandover): a release gives the lock straight to a waiting caller of the same
 * process, and waiting processes are marked in the lock's hash so that they take turns.
 */
export class ReentrantLock extends ExclusiveHashLock implements LockHandover {
  readonly kind = 'reentrant' as const;

  constructor(engine: LockEngine, name: string) {
    super(engine, name, '', true);
  }

  /** It hands over: the capability is the lock itself (handOver, withdraw). */
  override get handover(): LockHandover {
    return this;
  }

  async attempt({ owner, leaseMs, watchdog, replicaAck, willWait, queued }: AttemptArgs): Promise<AttemptResult> {
    // A caller that will wait marks this process as waiting when it fails (see the acquire script);
    // a queued one that succeeds tells whether callers of this process still wait after it.
    const [first, second] = await this.engine.node.run(reentrantAcquire, {
      lock: this.id,
      fence: this.fenceKey,
      owner,
      leaseMs,
      waitingClient: willWait ? this.engine.clientId : '',
      queue: !queued ? 'not-queued' : this.engine.notifier.waiterCount(this.channel) > 1 ? 'others-wait' : 'last',
      watchdog,
    });
    if (first <= 0) return { acquired: false, ttl: second };
    if (replicaAck) await this.confirmGrant(owner, replicaAck);
    return { acquired: true, token: first, holds: second };
  }

  release(owner: string, all: boolean, expectedHolds?: number): Promise<number> {
    return this.hash.release(owner, all, expectedHolds, this.engine.notifier.waiterCount(this.channel) > 0);
  }

  /** @internal See LockHandover. */
  handOver({ owner, successor, leaseMs, successorWatchdog, yieldToOthers, successorIsLast, all }: HandOverArgs): Promise<[number, number]> {
    const { lock, fence, channel } = this.keys;
    return this.engine.node.run(reentrantHandover, {
      lock,
      fence,
      channel,
      owner,
      successor,
      leaseMs,
      client: this.engine.clientId,
      yieldToOthers,
      publish: this.engine.publishCommand,
      successorIsLast,
      grantLeaseMs: GRANT_LEASE_MS,
      successorWatchdog,
      all,
    });
  }

  /** @internal See LockHandover. */
  async withdraw(): Promise<void> {
    const { lock, fence, channel } = this.keys;
    await this.engine.node.run(reentrantWithdraw, {
      lock,
      fence,
      channel,
      client: this.engine.clientId,
      publish: this.engine.publishCommand,
      grantLeaseMs: GRANT_LEASE_MS,
    });
  }
}
