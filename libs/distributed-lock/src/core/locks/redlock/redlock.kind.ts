import { REENTRANT_KIND } from '../reentrant/reentrant.kind.js';
import type { LockProtocol } from '../lock-protocol.js';
import { fenceRaise } from './fence-raise.script.js';

/**
 * RedLock: the plain lock's layout, scripts and messages on each of N independent masters (its
 * releases grant nothing: it never marks waiting processes), plus the raise of every master's fence
 * counter to the token a majority agreed on. Inspected as the plain lock, on the first master.
 */
export const REDLOCK_KIND: LockProtocol = {
  name: 'redlock',
  variant: REENTRANT_KIND.variant,
  lockPath: REENTRANT_KIND.lockPath,
  other: [...REENTRANT_KIND.other, fenceRaise],
  messages: REENTRANT_KIND.messages,
  grantLeaseMs: undefined,
  inspection: undefined,
};
