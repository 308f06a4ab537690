import { exclusiveAdjust } from '../exclusive/exclusive-adjust.script.js';
import { exclusiveRelease } from '../exclusive/exclusive-release.script.js';
import { exclusiveRenew } from '../exclusive/exclusive-renew.script.js';
import { EXCLUSIVE_MESSAGES, GRANT_LEASE_MS } from '../exclusive/exclusive.messages.js';
import { forceUnlock } from '../exclusive/force-unlock.script.js';
import type { LockProtocol } from '../lock-protocol.js';
import { reentrantAcquire } from './reentrant-acquire.script.js';
import { reentrantHandover } from './reentrant-handover.script.js';
import { reentrantWithdraw } from './reentrant-withdraw.script.js';
import { REENTRANT_INSPECTION } from './reentrant.inspection.js';

/**
 * The plain (reentrant) lock: the hash `<prefix>{name}` (`owner`, `holds`, `token`, `renew`,
 * `granted` while a grant is unclaimed, and a waiting mark `w:<client>` = `<arrival>:<first caller>`
 * per process with callers waiting, numbered from `wseq`), the name's fence counter, and the channel
 * `<prefix>{name}:released`, on which its releases say `released` or `granted:<owner>:<token>:<lease
 * end>` (the lock granted to the first caller of the process that has waited longest, for
 * GRANT_LEASE_MS unless it claims it).
 */
export const REENTRANT_KIND: LockProtocol = {
  name: 'reentrant',
  variant: '',
  lockPath: [reentrantAcquire, exclusiveRelease, reentrantHandover, reentrantWithdraw, exclusiveRenew, exclusiveAdjust],
  other: [forceUnlock],
  messages: EXCLUSIVE_MESSAGES,
  grantLeaseMs: GRANT_LEASE_MS,
  inspection: REENTRANT_INSPECTION,
};
