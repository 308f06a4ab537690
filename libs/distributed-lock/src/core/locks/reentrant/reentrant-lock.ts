import type { HandoverArgs, HandoverReply, LockHandover } from '../../engine/lease-resource.js';
import { registryKey } from '../../engine/held-locks.js';
import type { ReleaseReply } from '../../scripts/lock-script.js';
import { pause } from '../../util/late-timer.js';
import { GRANT_LEASE_MS } from '../exclusive/exclusive.messages.js';
import { ExclusiveHashLock } from '../exclusive/exclusive-hash-lock.js';
import type { AttemptArgs, AttemptResult } from '../lock-kind.js';
import type { LockRuntime } from '../../engine/lock-runtime.js';
import { reentrantAcquire } from './reentrant-acquire.script.js';
import { reentrantHandover } from './reentrant-handover.script.js';
import { reentrantWithdraw } from './reentrant-withdraw.script.js';
import { REENTRANT_KIND } from './reentrant.kind.js';

/**
 * Redisson's RLock: an exclusive lock that its owner (a lock context) may take again. Each
 * acquisition adds a hold, each unlock removes one; at zero the lock goes to the next holder. Lives on
 * one node: a single Redis, the master of a master-slave or sentinel set, or the master of the lock's
 * slot in a cluster.
 *
 * It hands over (LockHandover): a release gives the lock straight to a waiting caller of the same
 * process, and waiting processes are marked in the lock's hash so that they take turns (`handover`
 * returns the lock itself as one; no `implements`: the capability is internal).
 */
export class ReentrantLock extends ExclusiveHashLock {
  readonly kind = 'reentrant' as const;

  /** @internal */
  constructor(runtime: LockRuntime, name: string) {
    super(runtime, name, REENTRANT_KIND, true);
  }

  /** @internal It hands over: the capability is the lock itself (releaseTo, withdraw). */
  override get handover(): LockHandover {
    return this;
  }

  /** @internal See LockKindContract. */
  async attempt({ owner, leaseMs, watchdog, replicaAck, willWait, queued }: AttemptArgs): Promise<AttemptResult> {
    // A caller that will wait marks this process as waiting when it fails (see the acquire script);
    // a queued one that succeeds tells whether callers of this process still wait after it.
    // Its waiting mark names the process's first waiting caller (a release grants the lock to it).
    const { lines } = this.runtime;
    const next = queued ? lines.firstWaiting(this.channel, owner) : undefined;
    const node = this.runtime.nodes[0]!;
    const reply = await node.run(reentrantAcquire, {
      lock: this.id,
      fence: this.fenceKey,
      owner,
      leaseMs,
      waitingClient: willWait ? this.runtime.clientId : '',
      queue: queued ? (next !== undefined ? 'others-wait' : 'last') : this.runtime.held.find(registryKey(owner, this))?.active ? 'holding' : 'not-queued',
      watchdog,
      firstIfFailed: queued ? lines.firstWaiting(this.channel)! : owner,
      firstIfAcquired: next ?? '',
      sentAfterServerMs: node.serverTimeAtLeast(),
    });
    if (reply.acquired && replicaAck) await this.confirmGrant(owner, replicaAck);
    return reply;
  }

  /** @internal See LeaseResource. */
  release(owner: string, all: boolean, expectedHolds?: number, token?: number): Promise<ReleaseReply> {
    return this.hash.release(owner, all, expectedHolds, this.runtime.lines.firstWaiting(this.channel), token);
  }

  /**
   * @internal See LockHandover. A grant to a caller of this process that is not waiting in its line:
   * given back (that grant only: by its token, and only while nobody claimed it) unless that caller is
   * still acquiring the lock (it has not joined the line yet: its attempt will find the grant held in
   * its name). A caller that left does not then hold the lock up for the grant's lease; one whose
   * attempt took the grant before the message came keeps it (a give-back by token alone dropped it:
   * simulator seed 1973); if others here still wait, the release marks this process again.
   */
  giveBackGrant(owner: string, token: number): void {
    const { runtime } = this;
    if (runtime.held.acquisitionsInFlight(registryKey(owner, this)) > 0) return;
    const firstHere = runtime.lines.firstWaiting(this.channel);
    runtime.background.run('release', this.name, () => runtime.roundTrips.bounded(this.hash.release(owner, true, undefined, firstHere, token, true)));
  }

  /** @internal See LockHandover. */
  releaseTo({ owner, successor, leaseMs, successorWatchdog, yieldToOthers, nextWaiter, all }: HandoverArgs): Promise<HandoverReply> {
    const { lock, fence, channel } = this.hash.keys;
    return this.runtime.nodes[0]!.run(reentrantHandover, {
      lock,
      fence,
      channel,
      owner,
      successor,
      leaseMs,
      client: this.runtime.clientId,
      yieldToOthers,
      publish: this.runtime.publishCommand(),
      nextWaiter: nextWaiter ?? '',
      grantLeaseMs: GRANT_LEASE_MS,
      successorWatchdog,
      all,
    });
  }

  /**
   * @internal See LockHandover. Best effort, but a mark left behind would cost every process a grant
   * that nobody takes (its lease): a failed attempt is retried twice. Each bounded by the operation timeout.
   */
  async withdraw(owner: string): Promise<void> {
    const { runtime } = this;
    const args = { ...this.hash.keys, client: runtime.clientId, owner, publish: runtime.publishCommand(), grantLeaseMs: GRANT_LEASE_MS };
    for (let attempt = 0; ; attempt++) {
      try {
        return void (await this.runtime.roundTrips.bounded(this.runtime.nodes[0]!.run(reentrantWithdraw, args)));
      } catch (error) {
        if (attempt >= 2 || this.runtime.isClosed) throw error;
        await pause(this.runtime.clock, 100 * 2 ** attempt);
      }
    }
  }
}
