import { withClient, type ServerSettings } from 'redis-topology';
import { withServer, type FoundServer, type ServerId } from '../harness/servers.js';
import { IOREDIS, type ClientDriver } from './client-drivers.js';
import { useMemoryStore, useMode, type ConformanceScope, type FixtureMode, type MemoryStoreSettings, type ModeFixture } from './fixture.js';
import { fencingSuite } from './suites/fencing.suite.js';
import { handoverSuite } from './suites/handover.suite.js';
import { leaderElectionSuite } from './suites/leader-election.suite.js';
import { lockFamilySuite } from './suites/lock-family.suite.js';
import { mutualExclusionSuite } from './suites/mutual-exclusion.suite.js';
import { ownershipSuite } from './suites/ownership.suite.js';
import { semaphoreSuite } from './suites/semaphore.suite.js';
import { reentrancySuite } from './suites/reentrancy.suite.js';
import { tryLockSuite } from './suites/try-lock.suite.js';
import { wakeUpSuite } from './suites/wake-up.suite.js';
import { waiterCleanupSuite } from './suites/waiter-cleanup.suite.js';
import { watchdogSuite } from './suites/watchdog.suite.js';

/** What every run's title ends with: the runtime, when it is not Node.js (Bun's test runner runs test/bun's files). */
const UNDER = process.versions.bun ? ` under Bun ${process.versions.bun}` : '';

/** What a run's title says of its client: nothing for ioredis (the library's own connections). */
const through = (driver: ClientDriver): string => (driver === IOREDIS ? '' : ` through ${driver.label}`);

/**
 * The lock's semantics, as one suite that runs unchanged against every deployment mode: each mode's
 * spec file calls this with its mode, the fixture starts that topology on loopback ports. The
 * in-memory store of `nestjs-distributed-lock/testing` runs it too, all but the tests that need
 * other processes.
 */
export function describeLockConformance(
  mode: FixtureMode,
  server: ServerSettings & { label?: string } = {},
  driver: ClientDriver = IOREDIS,
  scope: ConformanceScope = 'full',
): void {
  describe(`lock conformance${scope === 'core' ? ' core' : ''}: ${mode}${server.label ? ` on ${server.label}` : ''}${through(driver)}${UNDER}`, () => {
    const fx = useMode(mode, { bin: server.bin }, scope, driver);
    if (driver !== IOREDIS) {
      it(`lock clients run on the ${driver.label} client given to them`, async () => {
        const client = await fx.client();
        expect(client.mode).toBe('client');
        expect(client.target).toBe(driver.target);
        if (mode === 'cluster') {
          // A subscriber per shard: sharded pub/sub wherever the server has it (Redis 7+).
          const version = await withClient(fx.topology().servers[0]!, async (node) => /redis_version:(\d+)/.exec(await node.info('server'))![1]);
          expect(client.unlockNotifications?.flavour).toBe(Number(version) >= 7 ? 'sharded' : 'plain');
        }
      });
    }
    allSuites(fx);
  });
}

/**
 * The suite on the in-memory store with `settings` (strict keys, one slot per script): `scope` 'core'
 * for a second run that needs only every lock kind's scripts, not every test again.
 */
export function describeMemoryConformance(settings: MemoryStoreSettings, scope: ConformanceScope = 'full'): void {
  const strict = settings.strictKeys ?? settings.store?.strictKeys;
  const label = [strict ? `strict keys ${strict}` : '', settings.oneSlotPerScript ? 'one slot per script' : ''].filter(Boolean).join(', ');
  describe(`lock conformance${scope === 'core' ? ' core' : ''}: memory${label ? ` (${label})` : ''}${UNDER}`, () => {
    allSuites(useMemoryStore(settings, scope));
  });
}

/**
 * The core of the suite, for the servers besides the system's (scripts/servers.mjs): the same suites
 * with the tests that start worker processes, wait out long leases or cover ground the others
 * already cover left out (`itFull`, `itAcrossProcesses`). What is left runs every lock kind's scripts
 * and unlock notifications against the server: mutual exclusion with its control, reentrancy,
 * ownership, tryLock, wake-up and hand-over, waiters that give up, fencing tokens, lease expiry, a
 * fair lock, a semaphore, a read-write lock and a leader election; the full suite runs on the
 * system's redis-server in every mode.
 */
export function describeLockConformanceCore(mode: 'single' | 'cluster', server: FoundServer): void {
  describe(`lock conformance core: ${mode} on ${server.label}${UNDER}`, () => {
    const fx = useMode(mode, { bin: server.bin }, 'core');
    const pubsub = mode === 'cluster' && server.entry.shardedPubSub ? 'sharded' : 'plain';
    it(`unlock notifications go over ${pubsub} pub/sub`, async () => {
      const client = await fx.client();
      expect(client.unlockNotifications?.flavour).toBe(pubsub);
    });
    allSuites(fx);
  });
}

/** The core in single and cluster mode on server `id`; skipped, with the reason, when set-up could not fetch it. */
export function describeServerConformance(id: ServerId): void {
  withServer(id, `lock conformance core on ${id}${UNDER}`, (server) => {
    describeLockConformanceCore('single', server);
    describeLockConformanceCore('cluster', server);
  });
}

/**
 * The suite (`scope`) in `mode` through `driver` on server `id` of scripts/servers.mjs; skipped, with
 * the reason, when set-up could not fetch it (the skipped run's title names the server and the client).
 */
export function describeLockConformanceOn(id: ServerId, mode: FixtureMode, driver: ClientDriver, scope: ConformanceScope = 'full'): void {
  withServer(id, `lock conformance${scope === 'core' ? ' core' : ''} on ${id}${through(driver)}${UNDER}`, (server) => {
    describeLockConformance(mode, { bin: server.bin, label: server.label }, driver, scope);
  });
}

function allSuites(fx: ModeFixture): void {
  mutualExclusionSuite(fx);
  reentrancySuite(fx);
  ownershipSuite(fx);
  tryLockSuite(fx);
  wakeUpSuite(fx);
  handoverSuite(fx);
  waiterCleanupSuite(fx);
  fencingSuite(fx);
  watchdogSuite(fx);
  lockFamilySuite(fx);
  semaphoreSuite(fx);
  leaderElectionSuite(fx);
}
