import { slotOf, slotTag } from './slot-tags.js';
/**
 * Key and channel names of one lock. Every name carries the lock name as a `{hash tag}`, so all keys
 * of one lock live in one cluster slot and one script can touch them all; every name starts with the
 * prefix, so an ACL can confine a lock user to `~<prefix>*` and `&<prefix>*`.
 */
export class LockKeys {
  /**
   * `clustered`: every script's keys must share one slot: the keys live in a Redis Cluster, or on a
   * server that shards behind one endpoint (LockClientOptions.oneSlotPerScript).
   */
  constructor(
    readonly prefix: string,
    private readonly clustered = false,
  ) {}

  /**
   * The lock itself (a hash). `variant` separates the lock kinds that keep other state under the same
   * name (`:fair`, `:rw`), so a fair lock and a plain lock called "x" never read each other's hash.
   */
  lock(name: string, variant = ''): string {
    return `${this.prefix}{${name}}${variant}`;
  }

  /**
   * The fencing-token counter the lock `name` draws its tokens from (see next-token.lua.ts), shared by
   * every name: one per deployment, or where a script's keys must share a slot (`clustered`) one per
   * slot, named with a tag of that slot so that it lives beside the lock's keys. A bounded number of keys that never expire, whatever names
   * come and go.
   */
  fence(name: string): string {
    return this.clustered ? `${this.prefix}{${slotTag(slotOf(name))}}:fence` : `${this.prefix}fence`;
  }

  /** The channel the release script publishes on. */
  channel(name: string, variant = ''): string {
    return `${this.prefix}{${name}}${variant}:released`;
  }

  /** A fair lock's line: the queue (owner -> arrival) and each entry's deadline, beside its hash `lock(name, ':fair')`. */
  fairQueue(name: string): { queue: string; deadlines: string } {
    const hash = this.lock(name, ':fair');
    return { queue: `${hash}:queue`, deadlines: `${hash}:queue-deadlines` };
  }

  /** A read-write lock's live readers (owner -> lease end), beside its hash `lock(name, ':rw')`. */
  readers(name: string): string {
    return `${this.lock(name, ':rw')}:readers`;
  }

  /** Every key of the semaphore called `name` (its state is `<prefix>{name}:semaphore`). */
  semaphore(name: string): SemaphoreKeys {
    const state = this.lock(name, ':semaphore');
    return {
      state,
      holders: `${state}:holders`,
      queue: `${state}:queue`,
      queueDeadlines: `${state}:queue-deadlines`,
      fence: this.fence(name),
      channel: this.channel(name, ':semaphore'),
    };
  }
}

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

/**
 * The channel of one process (client id `clientId`) under a semaphore's `channel`: the one that process
 * subscribes to while callers of it wait, and the one the semaphore's scripts publish a waiter's grant
 * on (the part of its owner id before the first ':', see sem_process_channel). One message per grant,
 * to the process that waits for it, however many processes wait.
 */
export function processChannel(channel: string, clientId: string): string {
  return `${channel}:${clientId}`;
}
