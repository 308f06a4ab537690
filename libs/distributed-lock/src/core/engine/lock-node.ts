import type { Cluster, Redis } from 'ioredis';
import type { RedisClient } from '../connection/connection-strategy.js';
import { FAIR_ACQUIRE_SCRIPT, FAIR_LEAVE_SCRIPT } from '../scripts/fair-acquire.script.js';
import { FENCE_RAISE_SCRIPT } from '../scripts/fence-raise.script.js';
import { FORCE_UNLOCK_SCRIPT } from '../scripts/force-unlock.script.js';
import { bindScript, type ScriptArgument } from '../scripts/lock-script.js';
import { REENTRANT_ACQUIRE_SCRIPT } from '../scripts/reentrant-acquire.script.js';
import { REENTRANT_ADJUST_SCRIPT } from '../scripts/reentrant-adjust.script.js';
import { REENTRANT_HANDOFF_SCRIPT } from '../scripts/reentrant-handoff.script.js';
import { REENTRANT_RELEASE_SCRIPT } from '../scripts/reentrant-release.script.js';
import { REENTRANT_RENEW_SCRIPT } from '../scripts/reentrant-renew.script.js';
import { REENTRANT_UNMARK_SCRIPT } from '../scripts/reentrant-unmark.script.js';
import {
  READ_ACQUIRE_SCRIPT,
  READ_RELEASE_SCRIPT,
  READ_RENEW_SCRIPT,
  READ_WRITE_ADJUST_SCRIPT,
  READ_WRITE_FORCE_UNLOCK_SCRIPT,
  READ_WRITE_STATE_SCRIPT,
  WRITE_ACQUIRE_SCRIPT,
  WRITE_RELEASE_SCRIPT,
  WRITE_RENEW_SCRIPT,
} from '../scripts/read-write.scripts.js';

/** One place lock state lives (the only one, or one of RedLock's independent masters), with its scripts. */
export class LockNode {
  readonly scripts;

  /**
   * `before`: what the first script calls wait for (nothing once it is done): the pub/sub choice, so
   * that a lock taken by the first call is released with the right publish command.
   */
  constructor(
    readonly redis: RedisClient,
    readonly target: string,
    before?: () => Promise<unknown> | undefined,
  ) {
    this.scripts = gated(before, {
      reentrantAcquire: bindScript<[number, number]>(redis, REENTRANT_ACQUIRE_SCRIPT),
      reentrantRelease: bindScript<number>(redis, REENTRANT_RELEASE_SCRIPT),
      reentrantRenew: bindScript<number>(redis, REENTRANT_RENEW_SCRIPT),
      reentrantAdjust: bindScript<number>(redis, REENTRANT_ADJUST_SCRIPT),
      reentrantHandoff: bindScript<[number, number]>(redis, REENTRANT_HANDOFF_SCRIPT),
      reentrantUnmark: bindScript<number>(redis, REENTRANT_UNMARK_SCRIPT),
      forceUnlock: bindScript<number>(redis, FORCE_UNLOCK_SCRIPT),
      fenceRaise: bindScript<number>(redis, FENCE_RAISE_SCRIPT),
      fairAcquire: bindScript<[number, number]>(redis, FAIR_ACQUIRE_SCRIPT),
      fairLeave: bindScript<number>(redis, FAIR_LEAVE_SCRIPT),
      readAcquire: bindScript<[number, number]>(redis, READ_ACQUIRE_SCRIPT),
      writeAcquire: bindScript<[number, number]>(redis, WRITE_ACQUIRE_SCRIPT),
      readRenew: bindScript<number>(redis, READ_RENEW_SCRIPT),
      writeRenew: bindScript<number>(redis, WRITE_RENEW_SCRIPT),
      readRelease: bindScript<number>(redis, READ_RELEASE_SCRIPT),
      writeRelease: bindScript<number>(redis, WRITE_RELEASE_SCRIPT),
      readWriteAdjust: bindScript<number>(redis, READ_WRITE_ADJUST_SCRIPT),
      readWriteForceUnlock: bindScript<number>(redis, READ_WRITE_FORCE_UNLOCK_SCRIPT),
      readWriteState: bindScript<[number, number, number, number, number]>(redis, READ_WRITE_STATE_SCRIPT),
    });
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

type ScriptCalls = Record<string, (...args: ScriptArgument[]) => Promise<unknown>>;

/** `scripts`, each waiting for `before()` when it returns a promise. */
function gated<S extends ScriptCalls>(before: (() => Promise<unknown> | undefined) | undefined, scripts: S): S {
  if (!before) return scripts;
  const calls: ScriptCalls = {};
  for (const [name, call] of Object.entries(scripts)) {
    calls[name] = (...args) => {
      const waiting = before();
      return waiting ? waiting.then(() => call(...args)) : call(...args);
    };
  }
  return calls as S;
}
