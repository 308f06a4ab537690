import { slotOf, slotTag } from './slot-tags.js';
/**
 * Key and channel names of one lock. Every name carries the lock name as a `{hash tag}`, so all keys
 * of one lock live in one cluster slot and one script can touch them all; every name starts with the
 * prefix, so an ACL can confine a lock user to `~<prefix>*` and `&<prefix>*`. Each kind builds its own
 * layout from these (`core/locks/<kind>/`: the fair lock's queue, the read-write lock's readers, the
 * semaphore's keys).
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
   * name (`:fair`, `:rw`, `:semaphore`, each kind's own), so a fair lock and a plain lock called "x"
   * never read each other's hash.
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
}
