import { fencedOps } from './fencing/fenced-ops.script.js';
import { LockInspectionScript } from './inspection/inspect-lock.script.js';
import { registerInstance } from './inspection/instance-registration.js';
import { FAIR_KIND } from './locks/fair/fair.kind.js';
import type { LockProtocol } from './locks/lock-protocol.js';
import { READ_WRITE_KIND } from './locks/read-write/read-write.kind.js';
import { REDLOCK_KIND } from './locks/redlock/redlock.kind.js';
import { REENTRANT_KIND } from './locks/reentrant/reentrant.kind.js';
import { SEMAPHORE_KIND } from './locks/semaphore/semaphore.kind.js';
import type { AnyLockScript, ScriptText } from './scripts/lock-script.js';
import { ScriptBatch } from './scripts/script-batch.js';

/**
 * Every lock kind's protocol (each from its folder, see LockProtocol): the registry below collects
 * their scripts, and inspection their parts, in this order (without a kind, `inspect` shows the first
 * kind in use under a name).
 */
export const LOCK_KINDS: readonly LockProtocol[] = [REENTRANT_KIND, FAIR_KIND, READ_WRITE_KIND, SEMAPHORE_KIND, REDLOCK_KIND];

/** Each script once, in the order first listed (kinds share the exclusive hash's scripts). */
function once(scripts: readonly AnyLockScript[]): AnyLockScript[] {
  return [...new Set(scripts)];
}

/** The scripts of the lock path, which also run as functions of the batch script (group commit). */
const BATCHED = once(LOCK_KINDS.flatMap((kind) => kind.lockPath));

/**
 * The scripts of the lock path, which the client sends in batches when several are issued in one turn
 * (group commit, see LockNode): one batch script runs any sequence of them.
 */
export const LOCK_SCRIPT_BATCH = new ScriptBatch(BATCHED);

/** The inspection script, assembled from the kinds' parts (see LockInspectionScript). */
export const LOCK_INSPECTION = new LockInspectionScript(LOCK_KINDS.flatMap((kind) => (kind.inspection ? [kind.inspection] : [])));

/** Every Lua script of the library, the batch script among them: for SCRIPT LOAD (health check, tests). */
export const LOCK_SCRIPTS: readonly ScriptText[] = [
  LOCK_SCRIPT_BATCH,
  ...BATCHED,
  ...once(LOCK_KINDS.flatMap((kind) => kind.other)),
  LOCK_INSPECTION.script,
  registerInstance,
  fencedOps,
];

export type { AnyLockScript, LockScript, ScriptText } from './scripts/lock-script.js';
