import type { Hold } from './holds.js';
import type { SimLog } from './sim-log.js';
import type { Scheduler } from './scheduler.js';

/** The invariants, by name (each violation names one; see checkAccess and the simulation's end). */
export type InvariantName =
  | 'exclusive'
  | 'token-order'
  | 'token-unique'
  | 'lost-update'
  | 'held-after-unlock'
  | 'answer-late'
  | 'stuck'
  | 'starved'
  | 'left-behind'
  | 'left-after-close'
  | 'kept-after-call'
  | 'unexpected-error'
  | 'untold-loss'
  | 'runaway';

export interface Violation {
  readonly invariant: InvariantName;
  readonly at: number;
  readonly detail: string;
}

/** The protected resource behind one lock (family and name): a counter written under the lock, fenced. */
interface Cell {
  value: number;
  /** The highest token the resource accepted, and the hold that used it. */
  maxToken: number;
  maxHold: Hold | undefined;
}

/**
 * The simulation's judge. It sees every hold the library granted (as its caller learnt it), every
 * access to the protected resources, and the data lost by faults, and records each broken invariant:
 *
 * - `exclusive`: at the instant of an access, another live process holds the same lock validly by its
 *   own clock (for a read-write lock: a writer beside anyone; a semaphore: more permits than its size).
 *   Not checked between two holds of which one was granted before Redis lost data (a restart without
 *   persistence, a failover): no Redis lock can keep that promise (see the guarantees).
 * - `token-order`: the resource refused a valid holder because a hold granted before it used a higher
 *   token: tokens went backwards (the fence counter's floor is what prevents it, through data loss too).
 * - `token-unique`: two owners of one lock were given the same token.
 * - `lost-update`: a write accepted although another accepted write came between its read and it.
 * - `held-after-unlock`: Redis lists an owner as a holder after its last `unlock()` succeeded (checked
 *   then and after every later script on that lock, until the owner acquires it again).
 * - `untold-loss`: a holder's unlock finds the lock not held, and its signal never aborted (a lost
 *   lease must be told).
 */
export class Invariants {
  readonly violations: Violation[] = [];
  private readonly cells = new Map<string, Cell>();
  private readonly holdsByCell = new Map<string, Set<Hold>>();
  private readonly tokenOwners = new Map<string, string>();
  /** The latest time Redis lost data (restart without persistence, failover), or -Infinity. */
  private dataLostAt = -Infinity;

  constructor(
    private readonly scheduler: Scheduler,
    private readonly log: SimLog,
  ) {}

  violate(invariant: InvariantName, detail: string): void {
    this.log.line('CHECK', `VIOLATION ${invariant}: ${detail}`);
    this.violations.push({ invariant, at: this.scheduler.now, detail: this.log.normalize(detail) });
  }

  dataLost(): void {
    this.dataLostAt = this.scheduler.now;
  }

  /** Whether Redis lost data since `at` (a hold released before may be back, from a copy that predates the release). */
  dataLostSince(at: number): boolean {
    return this.dataLostAt >= at;
  }

  /** A hold the library granted (its caller just learnt it). */
  acquired(hold: Hold): void {
    let holds = this.holdsByCell.get(hold.cell);
    if (!holds) this.holdsByCell.set(hold.cell, (holds = new Set()));
    for (const other of holds) if (other.endedAt !== undefined || other.process.dead) holds.delete(other);
    holds.add(hold);
    // Per lock: one counter serves every name of a Redis (so tokens never repeat there at all), but
    // RedLock's token is the largest of a majority's counters, and two names may draw the same one.
    const key = `${hold.cell}\u0000${hold.token}`;
    const owner = this.tokenOwners.get(key);
    if (owner === undefined) this.tokenOwners.set(key, hold.owner);
    else if (owner !== hold.owner) this.violate('token-unique', `${hold.describe()} got token ${hold.token}, already given to ${owner} for the same lock`);
  }

  /** Its actor is done with it (released, or known lost). */
  ended(hold: Hold): void {
    hold.endedAt ??= this.scheduler.now;
  }

  /**
   * An access to the resource under `hold` (its actor checked the lease at this instant): a read
   * returns the value, a write stores `value` and expects the resource to hold `expected` still.
   * Fenced holds are refused when their token is below the highest accepted; either way the other
   * holders of the lock are checked. Returns undefined when the resource refused the access.
   */
  access(hold: Hold, fenced: boolean, write?: { expected: number; value: number }): number | undefined {
    this.checkExclusive(hold);
    const cell = this.cell(hold.cell);
    if (fenced) {
      if (hold.token < cell.maxToken) {
        this.refused(hold, cell);
        return undefined;
      }
      cell.maxToken = hold.token;
      cell.maxHold = hold;
    }
    if (!write) return cell.value;
    if (cell.value !== write.expected) {
      this.violate('lost-update', `${hold.describe()} wrote ${write.value} over ${cell.value}, having read ${write.expected}: another write came between`);
    }
    cell.value = write.value;
    return cell.value;
  }

  private refused(hold: Hold, cell: Cell): void {
    const newer = cell.maxHold;
    if (!hold.valid || !newer) return;
    if (newer.grantedFrom > hold.grantedFrom) {
      // A hold granted after this one, with a higher token, while this one is still valid: two holders.
      if (!this.exempt(hold, newer)) this.violate('exclusive', `${hold.describe()} was fenced out by ${newer.describe()}, granted while it was valid`);
    } else {
      this.violate('token-order', `${hold.describe()} was fenced out by token ${cell.maxToken} of ${newer.describe()}, granted before it`);
    }
  }

  private checkExclusive(hold: Hold): void {
    const others = [...(this.holdsByCell.get(hold.cell) ?? [])].filter((other) => other !== hold && other.owner !== hold.owner && other.valid);
    const { sharing } = hold;
    if (sharing.mode === 'permits') {
      const live = others.filter((other) => other.sharing.mode === 'permits' && !this.exempt(hold, other));
      const used = live.reduce((sum, other) => sum + (other.sharing.mode === 'permits' ? other.sharing.permits : 0), sharing.permits);
      if (used > sharing.size) {
        this.violate(
          'exclusive',
          `${hold.describe()}: ${used} permits held validly at once, size ${sharing.size} (${live.map((other) => other.describe()).join('; ')})`,
        );
      }
      return;
    }
    for (const other of others) {
      if (sharing.mode === 'read' && other.sharing.mode === 'read') continue;
      if (this.exempt(hold, other)) continue;
      this.violate('exclusive', `${hold.describe()} and ${other.describe()} are both valid`);
      return;
    }
  }

  /**
   * Two holds of which one may have been granted before Redis last lost data: exclusion is not promised
   * between them (its grant may be what was lost).
   */
  private exempt(a: Hold, b: Hold): boolean {
    return Math.min(a.grantedFrom, b.grantedFrom) < this.dataLostAt;
  }

  private cell(key: string): Cell {
    let cell = this.cells.get(key);
    if (!cell) this.cells.set(key, (cell = { value: 0, maxToken: -Infinity, maxHold: undefined }));
    return cell;
  }
}
