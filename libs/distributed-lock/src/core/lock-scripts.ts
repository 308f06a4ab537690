import { fairAcquire } from './locks/fair/fair-acquire.script.js';
import { fairLeave } from './locks/fair/fair-leave.script.js';
import { fenceRaise } from './locks/redlock/fence-raise.script.js';
import { fencedOps } from './fencing/fenced-ops.script.js';
import { forceUnlock } from './locks/exclusive/force-unlock.script.js';
import { inspectLock } from './inspection/inspect-lock.script.js';
import { registerInstance } from './inspection/instance-registration.js';
import type { ScriptText } from './scripts/lock-script.js';
import { ScriptBatch } from './scripts/script-batch.js';
import { readAcquire } from './locks/read-write/read-acquire.script.js';
import { readWriteAdjust, readWriteForceUnlock, readWriteState } from './locks/read-write/read-write-admin.script.js';
import { readRelease, writeRelease } from './locks/read-write/read-write-release.script.js';
import { readRenew, writeRenew } from './locks/read-write/read-write-renew.script.js';
import { reentrantAcquire } from './locks/reentrant/reentrant-acquire.script.js';
import { exclusiveAdjust } from './locks/exclusive/exclusive-adjust.script.js';
import { reentrantHandover } from './locks/reentrant/reentrant-handover.script.js';
import { exclusiveRelease } from './locks/exclusive/exclusive-release.script.js';
import { exclusiveRenew } from './locks/exclusive/exclusive-renew.script.js';
import { reentrantWithdraw } from './locks/reentrant/reentrant-withdraw.script.js';
import { semaphoreAcquire } from './locks/semaphore/semaphore-acquire.script.js';
import { semaphoreLeave } from './locks/semaphore/semaphore-leave.script.js';
import { semaphorePermits } from './locks/semaphore/semaphore-permits.script.js';
import { semaphoreRelease } from './locks/semaphore/semaphore-release.script.js';
import { semaphoreRenew } from './locks/semaphore/semaphore-renew.script.js';
import { writeAcquire } from './locks/read-write/write-acquire.script.js';

/** The scripts of the lock path, which also run as functions of the batch script (group commit). */
const BATCHED = [
  reentrantAcquire,
  exclusiveRelease,
  reentrantHandover,
  reentrantWithdraw,
  exclusiveRenew,
  exclusiveAdjust,
  fairAcquire,
  fairLeave,
  readAcquire,
  writeAcquire,
  readRenew,
  writeRenew,
  readRelease,
  writeRelease,
  readWriteAdjust,
  semaphoreAcquire,
  semaphoreRenew,
  semaphoreRelease,
  semaphoreLeave,
] as const;

/**
 * The scripts of the lock path, which the client sends in batches when several are issued in one turn
 * (group commit, see LockNode): one batch script runs any sequence of them.
 */
export const LOCK_SCRIPT_BATCH = new ScriptBatch(BATCHED);

/** Every Lua script of the library, the batch script among them: for SCRIPT LOAD (health check, tests). */
export const LOCK_SCRIPTS: readonly ScriptText[] = [
  LOCK_SCRIPT_BATCH,
  ...BATCHED,
  forceUnlock,
  fenceRaise,
  readWriteState,
  readWriteForceUnlock,
  inspectLock,
  registerInstance,
  fencedOps,
  semaphorePermits,
];

export type { AnyLockScript, LockScript, ScriptText } from './scripts/lock-script.js';
