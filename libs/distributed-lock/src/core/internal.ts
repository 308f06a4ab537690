/**
 * The one internal entry of the core, for the library's own Nest layer (`nest/`) and lock board
 * (`board/`): what they need beyond the public API (`index.ts`), and nothing a user should import.
 * They import core only through `index.ts` and this file (`npm run lint` forbids deeper imports), so
 * what they depend on is listed here, in one place.
 */

// Lock contexts: the owner of an acquisition is the running code's lock context (AsyncLocalStorage).
export { getLockContext, runInLockContext, runInNewLockContext, runWithCurrentLock, type LockContext } from './context/lock-context.js';
// Checking what decorators and module options are given, with the core's own rules and messages.
export { describe, toMilliseconds } from './util/duration.js';
export { assertKnownKeys, assertLockName, isPlainObject } from './util/validate.js';
export { leaseMs, queueTimeoutMs, waitMs } from './locks/acquire-options.js';
export { permitCount } from './locks/semaphore/semaphore.js';
export { configDuration } from './config/resolve-lock-client-options.js';
// Timers on the client's clock (time is a port).
export { afterTimeout, settleWithin } from './util/late-timer.js';
// What the health indicator and the start-up log read.
export { describePubSubChoice } from './events/pubsub-choice.js';
export { LOCK_SCRIPTS } from './lock-scripts.js';
export type { RedisCommands, RedisConnection } from './redis/redis-port.js';
// The lock board's filter matches names as Redis' SCAN does (the in-memory store's SCAN uses it too).
export { redisGlob } from './util/redis-glob.js';
