import type { LockKeys } from '../../scripts/lock-keys.js';

/** The semaphore's key variant: its state is `<prefix>{name}:semaphore`. */
export const SEMAPHORE_VARIANT = ':semaphore';

/**
 * The keys of one semaphore, in the order every semaphore script takes them. All carry the
 * semaphore's `{name}` hash tag: one cluster slot, so one script can touch them all.
 */
export interface SemaphoreKeys {
  /**
   * Hash: `permits` (the semaphore's size), `used` (permits held by live leases), `h:<holder>` =
   * `<permits>:<token>` and `d:<holder>` = 1 if its watchdog renews it (for inspection) per holder,
   * `w:<waiter>` = permits asked for, per queued waiter, and `q` = how many wait in the queue (so that a
   * script that reads 0 need not look at the line). Never expires
   * (it carries the size); the rest is cleaned as leases end and waiters leave.
   */
  readonly state: string;
  /** Sorted set: holder -> server ms at which its lease ends. */
  readonly holders: string;
  /** Sorted set: queued waiter -> arrival ticket. */
  readonly queue: string;
  /** Sorted set: queued waiter -> server ms after which its place counts as dead (not refreshed). */
  readonly queueDeadlines: string;
  /** The fencing-token counter of the name (shared with the locks of the same name). */
  readonly fence: string;
  /**
   * The semaphore's channel: its scripts tell a waiter of its grant (or that its request is too large)
   * on `<channel>:<client id>` (see `processChannel`), the channel of the waiter's process only.
   */
  readonly channel: string;
}

/** Every key of the semaphore called `name` (its state is `<prefix>{name}:semaphore`). */
export function semaphoreKeys(keys: LockKeys, name: string): SemaphoreKeys {
  const state = keys.lock(name, SEMAPHORE_VARIANT);
  return {
    state,
    holders: `${state}:holders`,
    queue: `${state}:queue`,
    queueDeadlines: `${state}:queue-deadlines`,
    fence: keys.fence(name),
    channel: keys.channel(name, SEMAPHORE_VARIANT),
  };
}

/**
 * The channel of one process (client id `clientId`) under a semaphore's `channel`: the one that process
 * subscribes to while callers of it wait, and the one the semaphore's scripts publish a waiter's grant
 * on (the part of its owner id before the first ':', see sem_process_channel). One message per grant,
 * to the process that waits for it, however many processes wait.
 */
export function processChannel(channel: string, clientId: string): string {
  return `${channel}:${clientId}`;
}
