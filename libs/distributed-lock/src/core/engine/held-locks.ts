import type { HeldLock } from './held-lock.js';
import type { LeaseResource } from './lease-resource.js';
import type { RegistryKey } from './registry-key.js';

/**
 * The locks this process holds, by owner and lock, and the acquisitions in flight. Only bookkeeping:
 * what a lock is held for, and what happens when it ends, is the engine's (see LockEngine).
 */
export class HeldLocks {
  private readonly byOwner = new Map<RegistryKey, HeldLock>();
  /** Acquisitions in flight per owner and lock, to tell a phantom grant from a concurrent real one. */
  private readonly inFlight = new Map<RegistryKey, number>();

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

  /** The lock `key` (see registryKey) names, if its owner holds it. */
  find(key: RegistryKey): HeldLock | undefined {
    return this.byOwner.get(key);
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
    this.byOwner.set(held.key, held);
  }

  remove(held: HeldLock): void {
    if (this.byOwner.get(held.key) === held) this.byOwner.delete(held.key);
  }

  /** Counts an acquisition of the owner and lock `key` names as in flight until the returned function is called. */
  beginAcquisition(key: RegistryKey): () => void {
    this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
    return () => {
      const left = (this.inFlight.get(key) ?? 1) - 1;
      if (left > 0) this.inFlight.set(key, left);
      else this.inFlight.delete(key);
    };
  }

  /** Acquisitions of the owner and lock `key` names in flight right now (the caller's included, if counted). */
  acquisitionsInFlight(key: RegistryKey): number {
    return this.inFlight.get(key) ?? 0;
  }
}
