import type { KindInspection } from '../inspection/kind-inspection.js';
import type { AnyLockScript } from '../scripts/lock-script.js';
import type { ChannelMessages } from '../waiting/line-event.js';

/**
 * One lock kind's whole protocol, exported by its folder (`core/locks/<kind>/<kind>.kind.ts`): what
 * it keeps in Redis and under which keys, the scripts that change it, the messages those scripts
 * publish and how they read, how long a grant to a waiter lasts, and how inspection reads it. A new
 * kind, or a change of a kind's layout, touches its folder (and the list of kinds in lock-scripts.ts).
 */
export interface LockProtocol {
  /** For messages and the script registry. */
  readonly name: string;
  /** The suffix of its keys after `<prefix>{name}` ('' for the plain lock), so that kinds under one name never meet. */
  readonly variant: string;
  /**
   * Its scripts on the lock path (acquire, renew, release, leave...): run alone or as functions of the
   * batch script (group commit, see ScriptBatch), which numbers them in the order of the kinds and of
   * this list. A script several kinds run (the exclusive hash's) is listed by each and counted once.
   */
  readonly lockPath: readonly AnyLockScript[];
  /** Its other scripts: reads and administrative operations, never batched. */
  readonly other: readonly AnyLockScript[];
  /** The codec of what its scripts publish on the channel its waiters listen on. */
  readonly messages: ChannelMessages;
  /** How long what its releases grant a waiting process or caller is held for it (undefined: they grant nothing). */
  readonly grantLeaseMs: number | undefined;
  /** Its part of inspection; undefined for a kind inspected as another (RedLock: the plain lock on each master). */
  readonly inspection: KindInspection | undefined;
}
