import { Cluster, Redis } from 'ioredis';
import { LockClient, type LockClientOptions } from 'nestjs-distributed-lock';
import { InMemoryLockStore, type MemoryKeyspace, type StrictKeys } from 'nestjs-distributed-lock/testing';
import { startTopology, withClient, type ServerSettings, type Topology, type TopologyMode } from 'redis-topology';
import { LockNode } from '../../libs/distributed-lock/src/core/connection/lock-node.js';
import { LOCK_SCRIPTS } from '../../libs/distributed-lock/src/core/lock-scripts.js';
import type { AnyLockScript } from '../../libs/distributed-lock/src/core/scripts/lock-script.js';
import { IOREDIS, type ClientDriver, type DataCommands, type DriverClient, type ScriptSendCounter } from './client-drivers.js';

/** A Redis topology, or the in-memory store users' unit tests run on (single process only). */
export type FixtureMode = TopologyMode | 'memory';

/**
 * One deployment mode for the conformance suite: its topology, clients configured only from the
 * topology's environment variables (as a deployment would), and the few assertions that must look at
 * Redis itself, made mode-aware here so that the suites stay identical for every mode.
 */
export interface ModeFixture {
  readonly mode: FixtureMode;
  /**
   * 'full': every test (the system's redis-server in every mode, and the in-memory store). 'core': the
   * part that proves the protocol on another server version cheaply (describeLockConformanceCore):
   * tests registered with `itFull(fx)` or `itAcrossProcesses(fx)` are left out.
   */
  readonly scope: ConformanceScope;
  /**
   * Whether other OS processes can share the locks (false for the in-memory store): tests that
   * start worker processes are registered with `acrossProcesses(fx)` instead of `it`.
   */
  readonly acrossProcesses: boolean;
  /** Whether the clients keep every script's keys in one hash slot outside a cluster (LockClientOptions.oneSlotPerScript). */
  readonly oneSlotPerScript: boolean;
  topology(): Topology;
  /** Environment for worker processes and LockClient({ env }). */
  env(): Record<string, string>;
  /** Which client library the lock clients run on (see client-drivers.ts). */
  readonly driver: ClientDriver['name'];
  /** A connected LockClient for this mode; closed after the test. */
  client(overrides?: Omit<LockClientOptions, 'env' | 'connection'>): Promise<LockClient>;
  /** Plain commands for a test's own data, on `client`'s connection (its first node). */
  data(client: LockClient): DataCommands;
  /** Counts the sends of the script `sha` on `client`'s (first) connection, until restored. */
  countScriptSends(client: LockClient, sha: string): ScriptSendCounter;
  /** Whether a key exists on the node(s) holding lock state (all of them: RedLock). */
  keyExistsEverywhere(key: string): Promise<boolean>;
  keyExistsAnywhere(key: string): Promise<boolean>;
  /** A hash field as every lock node has it (one entry per node). */
  hget(key: string, field: string): Promise<(string | null)[]>;
  /** A key's remaining time to live in ms as every lock node has it (-1: no expiry, -2: no key). */
  pttl(key: string): Promise<number[]>;
  /** Sets a string key on every lock node. */
  set(key: string, value: string): Promise<void>;
  /** Deletes a key on every lock node (a lost key, as after a restart without persistence). */
  del(key: string): Promise<void>;
  /** The fields of a hash on the (first) lock node. */
  hkeys(key: string): Promise<string[]>;
  /** Subscribers of an unlock channel, across the nodes that carry it. */
  subscribers(channel: string): Promise<number>;
  /** Loads every script `client` has registered into every lock node's script cache (SCRIPT LOAD). */
  loadScripts(client: LockClient): Promise<void>;
  /** Script runs (EVAL + EVALSHA) on the lock nodes since `resetStats()`. */
  scriptCalls(): Promise<number>;
  resetStats(): Promise<void>;
  /** Script runs of one acquisition attempt that fails (RedLock: one per node). */
  readonly scriptsPerAttempt: number;
  /** Script runs of one successful acquisition (RedLock: attempt and token raise on every node). */
  readonly scriptsPerGrant: number;
  /**
   * Script runs a hand-over to a waiter of the same process costs: one (release and grant in one
   * step); RedLock: the release and the woken waiter's attempt on every node, plus the token raise.
   */
  readonly scriptsPerHandover: number;
}

function scriptCallsIn(info: string): number {
  return info
    .split('\n')
    .filter((line) => /^cmdstat_eval(sha)?:/.test(line))
    .reduce((sum, line) => sum + Number(/calls=(\d+)/.exec(line)![1]), 0);
}

export type ConformanceScope = 'full' | 'core';

/** Runs of one script counted by countScriptRuns: issued, and answered (its reply came back, or its error). */
export interface ScriptRunCounter extends ScriptSendCounter {
  readonly answered: number;
}

/**
 * Counts the runs of `script` that lock clients of this process issue, one per operation and node,
 * until restored. Whether an operation then travels alone or in a batch (several operations of one
 * turn as one script call, which Redis's command stats count once) does not change the count.
 * `answered` counts those whose reply came back: Redis has run them.
 */
export function countScriptRuns(script: AnyLockScript): ScriptRunCounter {
  const original = LockNode.prototype.run;
  let count = 0;
  let answered = 0;
  LockNode.prototype.run = function (this: LockNode, ...args: Parameters<LockNode['run']>) {
    const reply = original.apply(this, args);
    if (args[0] === script) {
      count += 1;
      reply.then(
        () => (answered += 1),
        () => (answered += 1),
      );
    }
    return reply;
  } as LockNode['run'];
  return {
    get count() {
      return count;
    },
    get answered() {
      return answered;
    },
    restore: () => {
      LockNode.prototype.run = original;
    },
  };
}

/** Registers nothing: a test the fixture's scope leaves out is not part of that run at all. */
const leftOut = (() => undefined) as unknown as jest.It;

/**
 * `it` for a test that needs other processes to share the locks; skipped where they cannot, left out
 * of the core (worker processes prove the library across processes, which the full suite does; to
 * the server they are only more connections).
 */
export function itAcrossProcesses(fx: ModeFixture): jest.It {
  if (fx.scope === 'core') return leftOut;
  return fx.acrossProcesses ? it : it.skip;
}

/**
 * `it` for a test whose locking all happens in worker processes (the test only starts them and reads
 * the result). Workers run on ioredis whatever the fixture's client library, so with another driver
 * such a test would repeat the ioredis run of the same mode step for step: left out there.
 */
export function itWorkersOnly(fx: ModeFixture): jest.It {
  return fx.driver === 'ioredis' ? itAcrossProcesses(fx) : leftOut;
}

/** `it` for a test of the full suite only: what the core leaves out (a long wait, or ground it covers already). */
export function itFull(fx: ModeFixture): jest.It {
  return fx.scope === 'core' ? leftOut : it;
}

/** `server`: which redis-server binary the topology runs (default: the one on PATH); `driver`: the client library. */
export function useMode(mode: FixtureMode, server: ServerSettings = {}, scope: ConformanceScope = 'full', driver: ClientDriver = IOREDIS): ModeFixture {
  return mode === 'memory' ? useMemoryStore() : useTopology(mode, server, scope, driver);
}

/** How a conformance run sets up the in-memory store and its clients. */
export interface MemoryStoreSettings {
  /** The store's strict-keys mode (InMemoryLockStoreOptions.strictKeys); ignored when `store` is given. */
  readonly strictKeys?: StrictKeys;
  /** A store made by the caller (to watch what runs on it). */
  readonly store?: InMemoryLockStore;
  /** The clients' LockClientOptions.oneSlotPerScript. */
  readonly oneSlotPerScript?: boolean;
}

/**
 * Fails the test if strict keys refused a script during it, and clears the record: the library
 * swallows the errors of its background work (renewals, releases retried, withdrawals) and reports
 * them only in events, so a refusal there would not fail the test by itself.
 */
export function throwIfScriptsRefused(keyspace: MemoryKeyspace): void {
  const refused = keyspace.scriptKeyViolations.splice(0);
  if (refused.length === 0) return;
  const first = refused[0]!;
  throw new Error(`strict keys refused ${refused.length} script run(s) during this test; the first (${first.reason}): ${first.message}`);
}

/**
 * The in-memory store of `nestjs-distributed-lock/testing`: every client of the fixture shares one
 * store, as clients of one Redis share its data. The Redis-side assertions read the store directly.
 */
export function useMemoryStore(settings: MemoryStoreSettings = {}, scope: ConformanceScope = 'full'): ModeFixture {
  const store = settings.store ?? new InMemoryLockStore({ strictKeys: settings.strictKeys });
  const oneSlotPerScript = settings.oneSlotPerScript ?? false;
  const clients: LockClient[] = [];
  const { keyspace } = store;
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    throwIfScriptsRefused(keyspace);
  });
  return {
    mode: 'memory',
    scope,
    acrossProcesses: false,
    oneSlotPerScript,
    driver: 'ioredis',
    // The store answers ioredis' API.
    data: (client) => IOREDIS.data(client),
    countScriptSends: (client, sha) => IOREDIS.countScriptSends(client, sha),
    topology: () => {
      throw new Error('the in-memory store has no Redis topology');
    },
    env: () => {
      throw new Error('the in-memory store lives in this process: worker processes cannot reach it');
    },
    async client(overrides = {}) {
      const client = await LockClient.connect({ oneSlotPerScript, ...overrides, client: store });
      clients.push(client);
      return client;
    },
    keyExistsEverywhere: async (key) => keyspace.exists(key) === 1,
    keyExistsAnywhere: async (key) => keyspace.exists(key) === 1,
    hget: async (key, field) => [keyspace.hget(key, field)],
    pttl: async (key) => [keyspace.pttl(key)],
    del: async (key) => {
      keyspace.del(key);
    },
    set: async (key, value) => {
      keyspace.set(key, value);
    },
    hkeys: async (key) => Object.keys(keyspace.hgetall(key)),
    subscribers: async (channel) => keyspace.numsub(channel),
    loadScripts: async () => {
      await Promise.all(LOCK_SCRIPTS.map((script) => store.script('LOAD', script.lua)));
    },
    scriptCalls: async () => keyspace.scriptCalls,
    resetStats: async () => {
      keyspace.scriptCalls = 0;
    },
    scriptsPerAttempt: 1,
    scriptsPerGrant: 1,
    scriptsPerHandover: 1,
  };
}

function useTopology(mode: TopologyMode, server: ServerSettings, scope: ConformanceScope, driver: ClientDriver): ModeFixture {
  let topology: Topology | undefined;
  let admin: Redis[] = [];
  let cluster: Cluster | undefined;
  const clients: DriverClient[] = [];

  beforeAll(async () => {
    topology = await startTopology(mode, server);
    if (mode === 'cluster') {
      cluster = new Cluster(
        topology.servers.slice(0, 3).map((s) => ({ host: s.host, port: s.port })),
        { redisOptions: { maxRetriesPerRequest: 1 } },
      );
    }
  }, 60_000);
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });
  afterAll(async () => {
    admin.forEach((client) => client.disconnect());
    admin = [];
    cluster?.disconnect();
    await topology?.stop();
  });

  /** Plain connections to the data nodes that hold lock state: masters (or every RedLock node). */
  const lockNodes = (): Redis[] => {
    if (admin.length === 0) {
      const servers = mode === 'redlock' ? topology!.servers : mode === 'cluster' ? topology!.servers.slice(0, 3) : [topology!.servers[0]!];
      admin = servers.map((server) => server.client());
    }
    return admin;
  };

  const fixture: ModeFixture = {
    mode,
    scope,
    acrossProcesses: true,
    oneSlotPerScript: false,
    driver: driver.name,
    topology: () => topology!,
    env: () => ({ ...topology!.env }),
    async client(overrides = {}) {
      const made = await driver.connect(topology!, overrides);
      clients.push(made);
      return made.client;
    },
    data: (client) => driver.data(client),
    countScriptSends: (client, sha) => driver.countScriptSends(client, sha),
    async keyExistsEverywhere(key) {
      if (cluster) return (await cluster.exists(key)) === 1;
      const found = await Promise.all(lockNodes().map((node) => node.exists(key)));
      return found.every((n) => n === 1);
    },
    async keyExistsAnywhere(key) {
      if (cluster) return (await cluster.exists(key)) === 1;
      const found = await Promise.all(lockNodes().map((node) => node.exists(key)));
      return found.some((n) => n === 1);
    },
    async hget(key, field) {
      if (cluster) return [await cluster.hget(key, field)];
      return Promise.all(lockNodes().map((node) => node.hget(key, field)));
    },
    async pttl(key) {
      if (cluster) return [await cluster.pttl(key)];
      return Promise.all(lockNodes().map((node) => node.pttl(key)));
    },
    async set(key, value) {
      if (cluster) await cluster.set(key, value);
      else await Promise.all(lockNodes().map((node) => node.set(key, value)));
    },
    async del(key) {
      if (cluster) await cluster.del(key);
      else await Promise.all(lockNodes().map((node) => node.del(key)));
    },
    async hkeys(key) {
      if (cluster) return cluster.hkeys(key);
      return lockNodes()[0]!.hkeys(key);
    },
    async subscribers(channel) {
      if (mode === 'cluster') {
        // Sharded subscriptions live on the slot's master; a plain one (a cluster without sharded
        // pub/sub: Redis 6) on whichever node the client's subscriber picked, replicas included.
        const sharded = await Promise.all(
          lockNodes().map(async (node) => Number(((await node.call('PUBSUB', 'SHARDNUMSUB', channel).catch(() => [channel, 0])) as [string, number])[1])),
        );
        const plain = await Promise.all(
          topology!.servers.map((s) => withClient(s, async (node) => Number(((await node.pubsub('NUMSUB', channel)) as [string, number])[1]))),
        );
        return [...sharded, ...plain].reduce((a, b) => a + b, 0);
      }
      const counts = await Promise.all(lockNodes().map(async (node) => Number(((await node.pubsub('NUMSUB', channel)) as [string, number])[1])));
      return counts.reduce((a, b) => a + b, 0);
    },
    async loadScripts() {
      await Promise.all(lockNodes().flatMap((node) => LOCK_SCRIPTS.map((script) => node.script('LOAD', script.lua))));
    },
    async scriptCalls() {
      const infos = await Promise.all(lockNodes().map((node) => node.info('commandstats')));
      return infos.reduce((sum, info) => sum + scriptCallsIn(info), 0);
    },
    async resetStats() {
      await Promise.all(lockNodes().map((node) => node.config('RESETSTAT')));
    },
    scriptsPerAttempt: mode === 'redlock' ? 3 : 1,
    scriptsPerGrant: mode === 'redlock' ? 6 : 1,
    scriptsPerHandover: mode === 'redlock' ? 9 : 1,
  };
  return fixture;
}
