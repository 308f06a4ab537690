import type { LockEngine } from '../engine/lock-engine.js';
import type { ExclusiveKeys } from '../scripts/exclusive-keys.js';
import { forceUnlock } from '../scripts/force-unlock.script.js';
import { reentrantAdjust } from '../scripts/reentrant-adjust.script.js';
import { reentrantRelease } from '../scripts/reentrant-release.script.js';
import { reentrantRenew } from '../scripts/reentrant-renew.script.js';
import { GRANT_LEASE_MS } from '../waiting/unlock-notifier.js';

/**
 * The hash `{owner, holds, token}` in which the plain and the fair lock keep their holder: renewal,
 * release (which grants the lock to the process that has waited longest, see the release script),
 * hold adjustment, force unlock and reads. Each kind composes one, on its own key.
 */
export class ExclusiveHash {
  /** `waitersMark`: the kind's waiters mark their process in the hash (the plain lock; not the fair lock). */
  constructor(
    private readonly engine: LockEngine,
    private readonly keys: ExclusiveKeys,
    private readonly waitersMark: boolean,
  ) {}

  /** 1 if `owner` holds it and its lease was lengthened, else 0. */
  renew(owner: string, leaseMs: number): Promise<number> {
    return this.engine.node.run(reentrantRenew, { lock: this.keys.lock, owner, leaseMs });
  }

  /**
   * Drops one hold (or all). `waitingHere`: callers of this process still wait for the lock, so when
   * it goes to another process this one is marked as waiting, at the back.
   */
  release(owner: string, all: boolean, expectedHolds: number | undefined, waitingHere: boolean): Promise<number> {
    const { lock, fence, channel } = this.keys;
    return this.engine.node.run(reentrantRelease, {
      lock,
      fence,
      channel,
      owner,
      publish: this.engine.publishCommand,
      all,
      expectedHolds,
      grantLeaseMs: GRANT_LEASE_MS,
      stillWaitingClient: waitingHere ? this.engine.clientId : '',
      alwaysPublish: !this.waitersMark,
    });
  }

  adjust(owner: string, holds: number): Promise<number> {
    return this.engine.node.run(reentrantAdjust, { lock: this.keys.lock, owner, holds });
  }

  /** `owner`'s holds (0 when another owner holds it, or nobody). */
  async holdsOf(owner: string): Promise<number> {
    const [holder, holds] = await this.engine.redis.hmget(this.keys.lock, 'owner', 'holds');
    return holder === owner ? Number(holds) : 0;
  }

  /** Stale by design (the answer can change as soon as it is given): a replica may answer it. */
  async exists(): Promise<boolean> {
    return (await this.engine.staleReader().exists(this.keys.lock)) === 1;
  }

  /** Stale by design, like `exists`. */
  pttl(): Promise<number> {
    return this.engine.staleReader().pttl(this.keys.lock);
  }

  /** Deletes it whoever holds it and publishes the release. True if there was one. */
  async forceDelete(): Promise<boolean> {
    return (await this.engine.node.run(forceUnlock, { lock: this.keys.lock, channel: this.keys.channel, publish: this.engine.publishCommand })) === 1;
  }
}
