import type { LockKeys } from '../scripts/lock-keys.js';
import type { LockNode } from '../connection/lock-node.js';
import { InvalidLockArgumentError } from '../errors/invalid-lock-argument.error.js';
import type { LockInspectionScript } from './inspect-lock.script.js';
import { describe } from '../util/duration.js';
import { assertLockName, MAX_LOCK_NAME_LENGTH } from '../util/validate.js';
import { clientsIn, inspectionsOf, inUse, type InspectedName } from './inspection-reply.js';
import { readInstances } from './instance-registration.js';
import type { InspectedLockKind, ListLockNamesOptions, ListLocksOptions, LockInspection, LockInstanceInfo, LockNameList } from './lock-inspection.js';
import { scanInstanceIds, scanLockNames } from './lock-scan.js';

const DEFAULT_LIST_LIMIT = 100;
const MAX_LIST_LIMIT = 10_000;
const DEFAULT_NAMES_LIMIT = 1000;
const MAX_NAMES_LIMIT = 100_000;
/** Registered processes read by `instances` at most (a registration is one small hash per process). */
const MAX_INSTANCES = 10_000;

/** What inspection needs from the engine (kept narrow: the engine owns an inspector). */
export interface LockInspectorContext {
  /** Where lock state lives (RedLock: the first node, as it sees the lock). */
  readonly node: LockNode;
  readonly keys: LockKeys;
  readonly clientId: string;
  /** The inspection script and the kinds' parts it is made of (without a kind, `inspect` shows the first kind in use, in their order). */
  readonly inspection: LockInspectionScript;
  /** How long each caller of this process waiting on a channel has waited, in ms, longest first. */
  waitedMs(channel: string): number[];
  /** One bounded round trip (operationTimeout); failures become LockBackendError, a closed client LockClientClosedError. */
  query<T>(operation: string, name: string, run: () => Promise<T>): Promise<T>;
}

/**
 * Lock inspection: `inspect(name)` reads one name's lock state in one script (a consistent snapshot)
 * and names the processes involved from their registrations; `list(pattern)` finds names with SCAN
 * on every master and inspects each. Read-only: nothing here changes a lock.
 */
export class LockInspector {
  /** The kinds, in the order of the inspection's parts. */
  private readonly kinds: readonly InspectedLockKind[];
  /** The kind whose main key ends with each variant (for SCAN). */
  private readonly kindOfSuffix: ReadonlyMap<string, InspectedLockKind>;

  constructor(private readonly context: LockInspectorContext) {
    this.kinds = context.inspection.parts.map((part) => part.kind);
    this.kindOfSuffix = new Map(context.inspection.parts.map((part) => [part.variant, part.kind]));
  }

  /**
   * The lock (or semaphore) called `name`, as `kind`; without a kind, the kind in use under that name
   * (plain, else fair, else read-write, else semaphore; a plain lock nobody holds when none is).
   */
  async inspect(name: string, kind?: InspectedLockKind): Promise<LockInspection> {
    assertLockName(name);
    if (kind !== undefined && !this.kinds.includes(kind)) {
      const known = this.kinds.map((each) => `'${each}'`);
      throw new InvalidLockArgumentError('inspect kind', `expected ${known.slice(0, -1).join(', ')} or ${known.at(-1)}, got ${describe(kind)}.`);
    }
    const all = await this.inspectAll([name]);
    const kinds = all[0]!;
    if (kind) return kinds[kind]!;
    return this.kinds.map((k) => kinds[k]!).find(inUse) ?? kinds[this.kinds[0]!]!;
  }

  /** The locks held (or waited for), semaphores among them, whose names match the glob `pattern` (default every lock), sorted by name. */
  async list(pattern = '*', options: ListLocksOptions = {}): Promise<LockInspection[]> {
    assertPattern(pattern, 'list pattern');
    const limit = checkedLimit(options.limit, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, 'list limit');
    const { node, keys } = this.context;
    // Each SCAN call is one bounded round trip; the whole scan takes as many as the keyspace needs.
    const { names } = await scanLockNames(node.redis, keys.prefix, pattern, limit, this.kindOfSuffix, (call) => this.context.query('list', pattern, call));
    const sorted = [...names.keys()].sort();
    const inspections = await this.inspectAll(sorted);
    return sorted.flatMap((name, i) => [...names.get(name)!].map((kind) => inspections[i]![kind]!).filter(inUse));
  }

  /**
   * The names of the locks (and semaphores) whose names match the glob `pattern`, with the kinds kept
   * under each, found by SCAN on every master like `list`, without inspecting them: sorted by name,
   * at most `limit`. For paging through many locks: list the names, then `inspect` one page of them.
   * A name is listed while any of its keys exists (held, waited for, a semaphore's size kept).
   */
  async names(pattern = '*', options: ListLockNamesOptions = {}): Promise<LockNameList> {
    assertPattern(pattern, 'listNames pattern');
    const limit = checkedLimit(options.limit, DEFAULT_NAMES_LIMIT, MAX_NAMES_LIMIT, 'listNames limit');
    const { node, keys } = this.context;
    const found = await scanLockNames(node.redis, keys.prefix, pattern, limit, this.kindOfSuffix, (call) => this.context.query('listNames', pattern, call));
    const names = [...found.names.keys()].sort().map((name) => ({ name, kinds: this.kinds.filter((kind) => found.names.get(name)!.has(kind)) }));
    return { names, truncated: found.truncated };
  }

  /**
   * The processes registered for inspection now (each lock client registers at its first acquisition
   * and refreshes every 20 s, see InstanceRegistration), found by SCAN on every master, sorted by
   * label. Processes that never took a lock (this one, if it has not) are not registered.
   */
  async instances(): Promise<LockInstanceInfo[]> {
    const { node, keys, clientId, query } = this.context;
    const ids = await scanInstanceIds(node.redis, keys.prefix, MAX_INSTANCES, (call) => query('instances', 'clients', call));
    const instances = await query('instances', 'clients', () => readInstances(node.redis, keys.prefix, ids, clientId));
    // A registration that expired between the SCAN and the read has no host: it is gone.
    return [...instances.values()].filter((instance) => instance.host !== undefined).sort((a, b) => a.label.localeCompare(b.label));
  }

  /** Every kind under each name: one script per name, then one registration read per client seen. */
  private async inspectAll(names: string[]): Promise<Partial<Record<InspectedLockKind, LockInspection>>[]> {
    const { node, keys, clientId, query, inspection } = this.context;
    const replies: InspectedName[] = await Promise.all(
      names.map(async (name) => ({ name, reply: await query('inspect', name, () => node.run(inspection.script, { keys, name })) })),
    );
    const clients = replies.flatMap((named) => clientsIn(named.reply, inspection.parts));
    const instances = await query('inspect', names.join(', '), () => readInstances(node.redis, keys.prefix, clients, clientId));
    // This process's waiters are found by the channel their line listens on (each kind says which).
    const waitingHere = (name: string) => (kind: InspectedLockKind) => {
      const part = inspection.parts.find((each) => each.kind === kind)!;
      return this.context.waitedMs(part.waitingChannel(keys, name, clientId));
    };
    return replies.map((named) => inspectionsOf(named, inspection.parts, instances, waitingHere(named.name)));
  }
}

function assertPattern(pattern: unknown, argument: string): asserts pattern is string {
  if (typeof pattern !== 'string' || pattern === '' || pattern.length > MAX_LOCK_NAME_LENGTH || /[{}]/.test(pattern)) {
    throw new InvalidLockArgumentError(argument, `expected a glob over lock names without braces, e.g. 'product:*', got ${describe(pattern)}.`);
  }
}

function checkedLimit(value: number | undefined, fallback: number, max: number, argument: string): number {
  const limit = value ?? fallback;
  if (!Number.isInteger(limit) || limit < 1 || limit > max) {
    throw new InvalidLockArgumentError(argument, `expected an integer from 1 to ${max}, got ${describe(limit)}.`);
  }
  return limit;
}
