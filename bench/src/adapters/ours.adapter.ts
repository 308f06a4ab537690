import { LockClient } from 'nestjs-distributed-lock';
import { CouldNotRun, LEASE_MS, SCENARIOS, SEMAPHORE_PERMITS, SEMAPHORE_SCENARIOS, type LockAdapter, type ScenarioName } from './adapter.js';

interface HandleLike {
  unlock(): Promise<void>;
}
interface Lockable {
  lock(leaseTime?: number): Promise<HandleLike>;
}
/** The lock-family methods, typed loosely so the benchmark builds with or without them. */
interface FamilyMethods {
  getFairLock?(name: string): Lockable;
  getReadWriteLock?(name: string): { readLock(): Lockable; writeLock(): Lockable };
  getMultiLock?(names: string[]): Lockable;
  getSemaphore?(name: string, options: { size: number }): { acquire(permits: number, leaseTime?: number): Promise<HandleLike> };
}
type Client = LockClient & FamilyMethods;

/** One row of our library: which lock object to take for a key, with which lease. */
interface OurKind {
  id: string;
  label: string;
  /** The LockClient method the kind needs (checked when the row opens). */
  method: 'lock' | keyof FamilyMethods;
  /** undefined: no leaseTime, so the watchdog renews the lock (default 30 s lease, every 10 s). */
  leaseMs: number | undefined;
  scenarios: readonly ScenarioName[];
  note: string;
  /** Not a default setting: only with --only (see LockAdapter.experiment). */
  experiment?: boolean;
  /** ioredis options given to the client's connections (redisOptions), for experiments. */
  redisOptions?: Record<string, unknown>;
  /** A semaphore row (see LockAdapter.primitive). */
  primitive?: 'semaphore';
  lockFor(client: Client, key: string): Lockable;
}

/**
 * Our rows. A new lock kind is one more entry here: the scenarios, the worker processes and the
 * report pick it up by its id.
 */
const OUR_KINDS: OurKind[] = [
  {
    id: 'ours',
    label: 'nestjs-distributed-lock',
    method: 'lock',
    leaseMs: LEASE_MS,
    scenarios: SCENARIOS,
    note: 'client.lock(name, 10000): reentrant lock, explicit 10 s lease (watchdog off), waits without limit',
    lockFor: (client, key) => ({ lock: (lease) => client.lock(key, lease) }),
  },
  {
    id: 'ours-watchdog',
    label: 'nestjs-distributed-lock (watchdog)',
    method: 'lock',
    leaseMs: undefined,
    scenarios: SCENARIOS,
    note: 'client.lock(name): no leaseTime, so the watchdog keeps a 30 s lease renewed every 10 s',
    lockFor: (client, key) => ({ lock: () => client.lock(key) }),
  },
  {
    id: 'ours-autopipelining',
    label: 'ours, auto-pipelining on (experiment)',
    method: 'lock',
    leaseMs: LEASE_MS,
    scenarios: SCENARIOS,
    note: "as 'ours', with redisOptions { enableAutoPipelining: true } (the library leaves it off by default)",
    experiment: true,
    redisOptions: { enableAutoPipelining: true },
    lockFor: (client, key) => ({ lock: (lease) => client.lock(key, lease) }),
  },
  {
    id: 'ours-fair',
    label: 'ours: fair lock',
    method: 'getFairLock',
    leaseMs: LEASE_MS,
    scenarios: SCENARIOS,
    note: 'client.getFairLock(name).lock(10000)',
    lockFor: (client, key) => client.getFairLock!(key),
  },
  {
    id: 'ours-rw-write',
    label: 'ours: write lock',
    method: 'getReadWriteLock',
    leaseMs: LEASE_MS,
    scenarios: SCENARIOS,
    note: 'client.getReadWriteLock(name).writeLock().lock(10000)',
    lockFor: (client, key) => client.getReadWriteLock!(key).writeLock(),
  },
  {
    id: 'ours-rw-read',
    label: 'ours: read lock',
    method: 'getReadWriteLock',
    leaseMs: LEASE_MS,
    // Readers share the lock, so a read-modify-write counter under it would lose updates by design.
    scenarios: ['serial', 'parallel'],
    note: 'client.getReadWriteLock(name).readLock().lock(10000); shared, so not in the counter test',
    lockFor: (client, key) => client.getReadWriteLock!(key).readLock(),
  },
  {
    id: 'ours-multi',
    label: 'ours: multi-lock (3 names)',
    method: 'getMultiLock',
    leaseMs: LEASE_MS,
    scenarios: SCENARIOS,
    note: 'client.getMultiLock([name:a, name:b, name:c]).lock(10000): three locks, all or nothing',
    lockFor: (client, key) => client.getMultiLock!([`${key}:a`, `${key}:b`, `${key}:c`]),
  },
  {
    id: 'ours-semaphore',
    label: 'ours: semaphore',
    method: 'getSemaphore',
    leaseMs: LEASE_MS,
    scenarios: SEMAPHORE_SCENARIOS,
    primitive: 'semaphore',
    note: `client.getSemaphore(name, { size: ${SEMAPHORE_PERMITS} }).acquire(1, 10000): one permit, explicit 10 s lease`,
    lockFor: (client, key) => ({ lock: (lease) => client.getSemaphore!(key, { size: SEMAPHORE_PERMITS }).acquire(1, lease) }),
  },
];

function ourAdapter(kind: OurKind): LockAdapter {
  return {
    id: kind.id,
    label: kind.label,
    packageName: 'nestjs-distributed-lock',
    family: kind.method !== 'lock',
    experiment: kind.experiment ?? false,
    ...(kind.primitive ? { primitive: kind.primitive } : {}),
    scenarios: kind.scenarios,
    settings: {
      call: kind.note,
      leaseMs: kind.leaseMs ?? 'watchdog (30000, renewed every 10000)',
      waitTime: 'unbounded (lock() default)',
      connection: "LockClient.connect({ connection: { mode: 'single', host, port } }): one command + one subscriber connection",
      keyPrefix: 'lock: (default)',
    },
    async open(target) {
      const connection = { mode: 'single' as const, host: target.host, port: target.port, ...(kind.redisOptions ? { redisOptions: kind.redisOptions } : {}) };
      const client = (await LockClient.connect({ connection })) as Client;
      if (typeof client[kind.method] !== 'function') {
        await client.close();
        throw new CouldNotRun(`LockClient.${kind.method}() does not exist in this build of the library`);
      }
      return {
        async acquire(key) {
          const handle = await kind.lockFor(client, key).lock(kind.leaseMs);
          return () => handle.unlock();
        },
        close: () => client.close(),
      };
    },
  };
}

export const ourAdapters: LockAdapter[] = OUR_KINDS.map(ourAdapter);
