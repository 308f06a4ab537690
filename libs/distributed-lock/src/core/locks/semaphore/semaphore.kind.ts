import type { LockProtocol } from '../lock-protocol.js';
import { semaphoreAcquire } from './semaphore-acquire.script.js';
import { SEMAPHORE_VARIANT } from './semaphore-keys.js';
import { semaphoreLeave } from './semaphore-leave.script.js';
import { semaphorePermits } from './semaphore-permits.script.js';
import { semaphoreRelease } from './semaphore-release.script.js';
import { semaphoreRenew } from './semaphore-renew.script.js';
import { SEMAPHORE_INSPECTION } from './semaphore.inspection.js';
import { SEMAPHORE_GRANT_LEASE_MS, SEMAPHORE_MESSAGES } from './semaphore.messages.js';

/**
 * The semaphore: its state hash `<prefix>{name}:semaphore`, its holders, its line and the line's
 * deadlines (semaphore-keys.ts), the name's fence counter, and one channel per waiting process, on
 * which the scripts that serve the line address a waiter: `granted:<owner>:<token>:<lease end>` (its
 * permits, held for it for SEMAPHORE_GRANT_LEASE_MS) or `next:<owner>` (its request can never be met).
 */
export const SEMAPHORE_KIND: LockProtocol = {
  name: 'semaphore',
  variant: SEMAPHORE_VARIANT,
  lockPath: [semaphoreAcquire, semaphoreRenew, semaphoreRelease, semaphoreLeave],
  other: [semaphorePermits],
  messages: SEMAPHORE_MESSAGES,
  grantLeaseMs: SEMAPHORE_GRANT_LEASE_MS,
  inspection: SEMAPHORE_INSPECTION,
};
