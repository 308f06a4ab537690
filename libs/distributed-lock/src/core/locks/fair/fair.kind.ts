import { exclusiveAdjust } from '../exclusive/exclusive-adjust.script.js';
import { exclusiveRelease } from '../exclusive/exclusive-release.script.js';
import { exclusiveRenew } from '../exclusive/exclusive-renew.script.js';
import { EXCLUSIVE_MESSAGES } from '../exclusive/exclusive.messages.js';
import { forceUnlock } from '../exclusive/force-unlock.script.js';
import type { LockProtocol } from '../lock-protocol.js';
import { fairAcquire } from './fair-acquire.script.js';
import { FAIR_VARIANT } from './fair-keys.js';
import { fairLeave } from './fair-leave.script.js';
import { FAIR_INSPECTION } from './fair.inspection.js';

/**
 * The fair lock: the plain lock's hash under `<prefix>{name}:fair` (no waiting marks), its queue and
 * the queue's deadlines beside it (fair-keys.ts), the name's fence counter, and the channel
 * `<prefix>{name}:fair:released`, on which its releases, and a first waiter that leaves, say `released`.
 */
export const FAIR_KIND: LockProtocol = {
  name: 'fair',
  variant: FAIR_VARIANT,
  lockPath: [fairAcquire, fairLeave, exclusiveRelease, exclusiveRenew, exclusiveAdjust],
  other: [forceUnlock],
  messages: EXCLUSIVE_MESSAGES,
  grantLeaseMs: undefined,
  inspection: FAIR_INSPECTION,
};
