import { fairAcquire } from './fair-acquire.script.js';
import { fairLeave } from './fair-leave.script.js';
import { fenceRaise } from './fence-raise.script.js';
import { fencedOps } from './fenced-ops.script.js';
import { forceUnlock } from './force-unlock.script.js';
import { inspectLock } from './inspect-lock.script.js';
import type { AnyLockScript } from './lock-script.js';
import { readAcquire } from './read-acquire.script.js';
import { readWriteAdjust, readWriteForceUnlock, readWriteState } from './read-write-admin.script.js';
import { readRelease, writeRelease } from './read-write-release.script.js';
import { readRenew, writeRenew } from './read-write-renew.script.js';
import { reentrantAcquire } from './reentrant-acquire.script.js';
import { reentrantAdjust } from './reentrant-adjust.script.js';
import { reentrantHandover } from './reentrant-handover.script.js';
import { reentrantRelease } from './reentrant-release.script.js';
import { reentrantRenew } from './reentrant-renew.script.js';
import { reentrantWithdraw } from './reentrant-withdraw.script.js';
import { semaphoreAcquire } from './semaphore-acquire.script.js';
import { semaphoreLeave } from './semaphore-leave.script.js';
import { semaphorePermits } from './semaphore-permits.script.js';
import { semaphoreRelease } from './semaphore-release.script.js';
import { semaphoreRenew } from './semaphore-renew.script.js';
import { writeAcquire } from './write-acquire.script.js';

/** Every Lua script of the library: for SCRIPT LOAD (health check, tests) and the in-memory store. */
export const LOCK_SCRIPTS: readonly AnyLockScript[] = [
  reentrantAcquire,
  reentrantRelease,
  reentrantHandover,
  reentrantWithdraw,
  reentrantRenew,
  reentrantAdjust,
  forceUnlock,
  fenceRaise,
  fairAcquire,
  fairLeave,
  readAcquire,
  writeAcquire,
  readRenew,
  writeRenew,
  readRelease,
  writeRelease,
  readWriteAdjust,
  readWriteState,
  readWriteForceUnlock,
  inspectLock,
  fencedOps,
  semaphoreAcquire,
  semaphoreRenew,
  semaphoreRelease,
  semaphoreLeave,
  semaphorePermits,
];

export type { AnyLockScript, LockScript } from './lock-script.js';
