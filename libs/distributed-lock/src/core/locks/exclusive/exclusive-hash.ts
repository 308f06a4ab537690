import type { ReleaseReply } from '../../scripts/script-replies.js';
import { GRANT_LEASE_MS } from '../../waiting/lock-line.js';
import type { LockServices } from '../lock-services.js';
import { exclusiveAdjust } from './exclusive-adjust.script.js';
import type { ExclusiveKeys } from './exclusive-keys.js';
import { exclusiveRelease } from './exclusive-release.script.js';
import { exclusiveRenew } from './exclusive-renew.script.js';
import { forceUnlock } from './force-unlock.script.js';

/**
 * The hash `{owner, holds, token}` in which the plain and the fair lock keep their holder: renewal,
 * release (which grants the lock to the process that has waited longest, see the release script),
 * hold adjustment, force unlock and reads. Each kind composes one, on its own key.
 */
export class ExclusiveHash {
  /** `waitersMark`: the kind's waiters mark their process in the hash (the plain lock; not the fair lock). */
  constructor(
    private readonly services: LockServices,
    readonly keys: ExclusiveKeys,
    private readonly waitersMark: boolean,
  ) {}

  /** Whether `owner` holds it, its lease now lengthened. */
  renew(owner: string, leaseMs: number): Promise<boolean> {
    return this.services.nodes[0]!.run(exclusiveRenew, { lock: this.keys.lock, owner, leaseMs });
  }

  /**
   * Drops one hold (or all). `waitingHere`: callers of this process still wait for the lock, so when
   * it goes to another process this one is marked as waiting, at the back.
   */
  release(owner: string, all: boolean, expectedHolds: number | undefined, waitingHere: boolean): Promise<ReleaseReply> {
    const { lock, fence, channel } = this.keys;
    return this.services.nodes[0]!.run(exclusiveRelease, {
      lock,
      fence,
      channel,
      owner,
      publish: this.services.publishCommand(),
      all,
      expectedHolds,
      grantLeaseMs: GRANT_LEASE_MS,
      stillWaitingClient: waitingHere ? this.services.clientId : '',
      alwaysPublish: !this.waitersMark,
    });
  }

  async adjust(owner: string, holds: number): Promise<void> {
    await this.services.nodes[0]!.run(exclusiveAdjust, { lock: this.keys.lock, owner, holds });
  }

  /** `owner`'s holds (0 when another owner holds it, or nobody). */
  async holdsOf(owner: string): Promise<number> {
    const [holder, holds] = await this.services.nodes[0]!.redis.hmget(this.keys.lock, 'owner', 'holds');
    return holder === owner ? Number(holds) : 0;
  }

  /** Stale by design (the answer can change as soon as it is given): a replica may answer it. */
  async exists(): Promise<boolean> {
    return (await this.services.staleReader().exists(this.keys.lock)) === 1;
  }

  /** Stale by design, like `exists`. */
  pttl(): Promise<number> {
    return this.services.staleReader().pttl(this.keys.lock);
  }

  /** Deletes it whoever holds it and publishes the release. True if there was one. */
  forceDelete(): Promise<boolean> {
    return this.services.nodes[0]!.run(forceUnlock, { lock: this.keys.lock, channel: this.keys.channel, publish: this.services.publishCommand() });
  }
}
