import { processChannel, type LockKeys } from '../scripts/lock-keys.js';
import type { LockNode } from '../connection/lock-node.js';
import { InvalidLockArgumentError } from '../errors/invalid-lock-argument.error.js';
import { inspectLock } from './inspect-lock.script.js';
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
/** Key variants of the kinds (see the lock classes): the plain lock has none. */
const VARIANT: Record<InspectedLockKind, string> = { reentrant: '', fair: ':fair', 'read-write': ':rw', semaphore: ':semaphore' };
/** Without a kind, `inspect` shows the first in use in this order. */
const KINDS = ['reentrant', 'fair', 'read-write', 'semaphore'] as const;

/** What inspection needs from the engine (kept narrow: the engine owns an inspector). */
export interface LockInspectorContext {
  /** Where lock state lives (RedLock: the first node, as it sees the lock). */
  readonly node: LockNode;
  readonly keys: LockKeys;
  readonly clientId: string;
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
  constructor(private readonly context: LockInspectorContext) {}

  /**
   * The lock (or semaphore) called `name`, as `kind`; without a kind, the kind in use under that name
   * (plain, else fair, else read-write, else semaphore; a plain lock nobody holds when none is).
   */
  async inspect(name: string, kind?: InspectedLockKind): Promise<LockInspection> {
    assertLockName(name);
    if (kind !== undefined && !Object.hasOwn(VARIANT, kind)) {
      throw new InvalidLockArgumentError('inspect kind', `expected 'reentrant', 'fair', 'read-write' or 'semaphore', got ${describe(kind)}.`);
    }
    const all = await this.inspectAll([name]);
    const kinds = all[0]!;
    if (kind) return kinds[kind];
    return KINDS.map((k) => kinds[k]).find(inUse) ?? kinds.reentrant;
  }

  /** The locks held (or waited for), semaphores among them, whose names match the glob `pattern` (default every lock), sorted by name. */
  async list(pattern = '*', options: ListLocksOptions = {}): Promise<LockInspection[]> {
    assertPattern(pattern, 'list pattern');
    const limit = checkedLimit(options.limit, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, 'list limit');
    const { node, keys } = this.context;
    // Each SCAN call is one bounded round trip; the whole scan takes as many as the keyspace needs.
    const { names } = await scanLockNames(node.redis, keys.prefix, pattern, limit, (call) => this.context.query('list', pattern, call));
    const sorted = [...names.keys()].sort();
    const inspections = await this.inspectAll(sorted);
    return sorted.flatMap((name, i) => [...names.get(name)!].map((kind) => inspections[i]![kind]).filter(inUse));
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
    const found = await scanLockNames(node.redis, keys.prefix, pattern, limit, (call) => this.context.query('listNames', pattern, call));
    const names = [...found.names.keys()].sort().map((name) => ({ name, kinds: KINDS.filter((kind) => found.names.get(name)!.has(kind)) }));
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
  private async inspectAll(names: string[]): Promise<Record<InspectedLockKind, LockInspection>[]> {
    const { node, keys, clientId, query } = this.context;
    const replies: InspectedName[] = await Promise.all(
      names.map(async (name) => ({
        name,
        reply: await query('inspect', name, () => {
          const fairLine = keys.fairQueue(name);
          const semaphore = keys.semaphore(name);
          return node.run(inspectLock, {
            plain: keys.lock(name),
            fence: keys.fence(name),
            fair: keys.lock(name, ':fair'),
            fairQueue: fairLine.queue,
            fairQueueDeadlines: fairLine.deadlines,
            readWrite: keys.lock(name, ':rw'),
            readers: keys.readers(name),
            semaphore: semaphore.state,
            semaphoreHolders: semaphore.holders,
            semaphoreQueue: semaphore.queue,
            semaphoreQueueDeadlines: semaphore.queueDeadlines,
          });
        }),
      })),
    );
    const clients = replies.flatMap((named) => clientsIn(named.reply));
    const instances = await query('inspect', names.join(', '), () => readInstances(node.redis, keys.prefix, clients, clientId));
    // This process's waiters are found by the channel their line listens on (a semaphore's: this process's own, as Semaphore derives it).
    const lineOf = (name: string, kind: InspectedLockKind): string =>
      kind === 'semaphore' ? processChannel(keys.semaphore(name).channel, clientId) : keys.channel(name, VARIANT[kind]);
    return replies.map((named) => inspectionsOf(named, instances, (kind) => this.context.waitedMs(lineOf(named.name, kind))));
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
