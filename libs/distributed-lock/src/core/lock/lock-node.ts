import type { Cluster, Redis } from 'ioredis';
import type { RedisClient } from '../connection/connection-strategy.js';
import { FENCE_RAISE_SCRIPT } from '../scripts/fence-raise.script.js';
import { FORCE_UNLOCK_SCRIPT } from '../scripts/force-unlock.script.js';
import { bindScript } from '../scripts/lock-script.js';
import { REENTRANT_ACQUIRE_SCRIPT } from '../scripts/reentrant-acquire.script.js';
import { REENTRANT_ADJUST_SCRIPT } from '../scripts/reentrant-adjust.script.js';
import { REENTRANT_RELEASE_SCRIPT } from '../scripts/reentrant-release.script.js';
import { REENTRANT_RENEW_SCRIPT } from '../scripts/reentrant-renew.script.js';

/** One place lock state lives (the only one, or one of RedLock's independent masters), with its scripts. */
export class LockNode {
  readonly scripts;

  constructor(
    readonly redis: RedisClient,
    readonly target: string,
  ) {
    this.scripts = {
      reentrantAcquire: bindScript<[number, number]>(redis, REENTRANT_ACQUIRE_SCRIPT),
      reentrantRelease: bindScript<number>(redis, REENTRANT_RELEASE_SCRIPT),
      reentrantRenew: bindScript<number>(redis, REENTRANT_RENEW_SCRIPT),
      reentrantAdjust: bindScript<number>(redis, REENTRANT_ADJUST_SCRIPT),
      forceUnlock: bindScript<number>(redis, FORCE_UNLOCK_SCRIPT),
      fenceRaise: bindScript<number>(redis, FENCE_RAISE_SCRIPT),
    };
  }

  /**
   * `WAIT replicas timeout` on the connection that wrote `key`: how many replicas have every write
   * that connection sent so far. In a cluster the command has no key, so it rides in a pipeline
   * behind a read of `key`, which routes it to the master of the key's slot.
   */
  async waitForReplicas(key: string, replicas: number, timeoutMs: number): Promise<number> {
    if (!this.redis.isCluster) return (this.redis as Redis).wait(replicas, timeoutMs);
    const results = await (this.redis as Cluster).pipeline().pttl(key).wait(replicas, timeoutMs).exec();
    const [error, count] = results?.[1] ?? [new Error('no reply to WAIT'), 0];
    if (error) throw error;
    return Number(count);
  }
}
