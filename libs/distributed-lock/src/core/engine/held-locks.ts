import type { HeldLock } from './held-lock.js';
import type { LeaseResource } from './lease-resource.js';

/**
 * The locks this process holds, by owner and lock, and the acquisitions in flight. Only bookkeeping:
 * what a lock is held for, and what happens when it ends, is the engine's (see LockEngine).
 */
export class HeldLocks {
  private readonly byOwner = new Map<string, HeldLock>();
  /** Acquisitions in flight per owner and lock, to tell a phantom grant from a concurrent real one. */
  private readonly inFlight = new Map<string, number>();

  get size(): number {
    return this.byOwner.size;
  }

  all(): HeldLock[] {
    return [...this.byOwner.values()];
  }

  /** Locks held right now by kind (read by the held-locks gauge, not on the lock path). */
  countByKind(): Map<LeaseResource['kind'], number> {
    const counts = new Map<LeaseResource['kind'], number>();
    for (const held of this.byOwner.values()) counts.set(held.resource.kind, (counts.get(held.resource.kind) ?? 0) + 1);
    return counts;
  }

  find(owner: string, resource: LeaseResource): HeldLock | undefined {
    return this.byOwner.get(ownerKey(owner, resource));
  }

  /** Every holder of `resource` in this process (several owners only for a shared read lock). */
  holdersOf(resource: LeaseResource): HeldLock[] {
    return this.all().filter((held) => held.resource.id === resource.id && held.resource.kind === resource.kind);
  }

  /**
   * Holders of `resource` whose acquisition was made outside any lock context. A scan: asked only by
   * a by-name call made outside a context, so acquisitions keep no index for it.
   */
  heldOutsideContext(resource: LeaseResource): HeldLock[] {
    return this.holdersOf(resource).filter((held) => held.outsideContext);
  }

  add(held: HeldLock): void {
    this.byOwner.set(ownerKey(held.owner, held.resource), held);
  }

  remove(held: HeldLock): void {
    const key = ownerKey(held.owner, held.resource);
    if (this.byOwner.get(key) === held) this.byOwner.delete(key);
  }

  /** Counts an acquisition by `owner` of `resource` as in flight until the returned function is called. */
  beginAcquisition(owner: string, resource: LeaseResource): () => void {
    const key = ownerKey(owner, resource);
    this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
    return () => {
      const left = (this.inFlight.get(key) ?? 1) - 1;
      if (left > 0) this.inFlight.set(key, left);
      else this.inFlight.delete(key);
    };
  }

  /** Acquisitions by `owner` of `resource` in flight right now (the caller's included, if counted). */
  acquisitionsInFlight(owner: string, resource: LeaseResource): number {
    return this.inFlight.get(ownerKey(owner, resource)) ?? 0;
  }
}

function lockKey(resource: LeaseResource): string {
  return `${resource.kind}\u0000${resource.id}`;
}

function ownerKey(owner: string, resource: LeaseResource): string {
  return `${owner}\u0000${lockKey(resource)}`;
}
