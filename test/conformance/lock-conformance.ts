import type { ServerSettings } from 'redis-topology';
import { useMode, type FixtureMode } from './fixture.js';
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

/**
 * The lock's semantics, as one suite that runs unchanged against every deployment mode: each mode's
 * spec file calls this with its mode, the fixture starts that topology on loopback ports. The
 * in-memory store of `nestjs-distributed-lock/testing` runs it too, all but the tests that need
 * other processes.
 */
export function describeLockConformance(mode: FixtureMode, server: ServerSettings & { label?: string } = {}): void {
  describe(`lock conformance: ${mode}${server.label ? ` on ${server.label}` : ''}`, () => {
    const fx = useMode(mode, { bin: server.bin });
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
  });
}
