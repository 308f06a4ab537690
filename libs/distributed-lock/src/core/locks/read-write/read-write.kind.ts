import { FREED_MESSAGES } from '../freed.message.js';
import type { LockProtocol } from '../lock-protocol.js';
import { readAcquire } from './read-acquire.script.js';
import { readWriteAdjust, readWriteForceUnlock, readWriteState } from './read-write-admin.script.js';
import { READ_WRITE_VARIANT } from './read-write-keys.js';
import { readRelease, writeRelease } from './read-write-release.script.js';
import { readRenew, writeRenew } from './read-write-renew.script.js';
import { READ_WRITE_INSPECTION } from './read-write.inspection.js';
import { writeAcquire } from './write-acquire.script.js';

/**
 * The read-write lock: the hash `<prefix>{name}:rw` and its readers' sorted set (the layout is in
 * read-write.lua.ts), the name's fence counter, and the channel `<prefix>{name}:rw:released`, on
 * which the releases that may let a waiter in say `released`.
 */
export const READ_WRITE_KIND: LockProtocol = {
  name: 'read-write',
  variant: READ_WRITE_VARIANT,
  lockPath: [readAcquire, writeAcquire, readRenew, writeRenew, readRelease, writeRelease, readWriteAdjust],
  other: [readWriteState, readWriteForceUnlock],
  messages: FREED_MESSAGES,
  grantLeaseMs: undefined,
  inspection: READ_WRITE_INSPECTION,
};
