import type { Clock } from '../../distributed-lock/src/core/util/clock.js';

/** What the simulator reads of a hold's lease, without changing anything (see leasesOf). */
interface LeaseView {
  readonly active: boolean;
  readonly validUntil: number;
  readonly owner: string;
  readonly token: number;
  /** When its acquisition started, by its process's clock. */
  readonly acquiredAt: number;
}

/** The families of lock state that exclude each other: one Redis hash (or set) per name and family. */
export type Family = 'plain' | 'fair' | 'rw' | 'semaphore';

/** How a hold shares its lock: alone, with other readers, or with up to `size` permit holders. */
export type Sharing =
  { readonly mode: 'exclusive' } | { readonly mode: 'read' } | { readonly mode: 'permits'; readonly permits: number; readonly size: number };

/** A process as the holds see it. */
export interface HoldingProcess {
  readonly name: string;
  readonly dead: boolean;
  /** Virtual time until which it is paused (0: it is not). */
  readonly pausedUntil: number;
  readonly clock: Clock;
  /** The virtual time at which its clock read `localMs`. */
  virtualTimeOf(localMs: number): number;
}

/**
 * The lease records behind a handle the library returned (a lock's, a multi-lock's, a semaphore's
 * permits, a leadership), read from its internals: the invariants must judge every holder's lease by
 * that holder's own clock at one instant without calling `isHeld`, which may declare a lease lost and
 * so change what the holder's process does next (a paused process must not act at all). Kept in this
 * one function, so that a change of the handles' internals breaks here, loudly.
 */
export function leasesOf(handle: object): LeaseView[] {
  const inner = handle as { held?: LeaseView; handle?: object; handles?: readonly object[] };
  if (inner.handles) return inner.handles.flatMap(leasesOf);
  if (inner.handle) return leasesOf(inner.handle);
  if (inner.held && typeof inner.held.validUntil === 'number') return [inner.held];
  throw new Error(`the simulator cannot read the lease of a ${handle.constructor.name}: its internals changed (see holds.ts)`);
}

/** One successful acquisition, as the invariants follow it until its actor ends it. */
export class Hold {
  private static next = 0;
  readonly id = Hold.next++;
  /** Set when its actor unlocked it (successfully or not) or gave it up as lost. */
  endedAt: number | undefined;
  private readonly leases: LeaseView[];

  constructor(
    readonly process: HoldingProcess,
    readonly family: Family,
    readonly name: string,
    readonly sharing: Sharing,
    readonly token: number,
    handle: object,
    /** Virtual time of the acquisition (as its caller learnt it). */
    readonly acquiredAt: number,
  ) {
    this.leases = leasesOf(handle);
    this.grantedFrom = Math.min(...this.leases.map((lease) => process.virtualTimeOf(lease.acquiredAt)));
  }

  /**
   * Virtual time at which the first of its leases started to be acquired: Redis may have granted it
   * from then on (a multi-lock's first lock long before its caller learnt of the last one).
   */
  readonly grantedFrom: number;

  get owner(): string {
    return this.leases[0]!.owner;
  }

  /** The cell this hold protects: its family and name. */
  get cell(): string {
    return `${this.family}:${this.name}`;
  }

  /**
   * Whether the holder may act under it right now, by its own process's clock: alive, not ended by its
   * actor, every lease active and before its local deadline. (What `isHeld` answers, without its side
   * effect.)
   */
  get valid(): boolean {
    if (this.process.dead || this.endedAt !== undefined) return false;
    const now = this.process.clock.now();
    return this.leases.every((lease) => lease.active && now < lease.validUntil);
  }

  /** Whether the library still keeps any of its leases (renews it, counts it held), its process alive. */
  get kept(): boolean {
    return !this.process.dead && this.leases.some((lease) => lease.active);
  }

  describe(): string {
    return `${this.process.name}'s ${this.sharing.mode} hold #${this.id} of ${this.cell} (owner ${this.owner}, token ${this.token}, acquired at ${this.acquiredAt.toFixed(3)})`;
  }
}
