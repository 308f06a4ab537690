import { WAITER_RECHECK_MS } from '../../distributed-lock/src/core/waiting/subscriptions.js';
import { MAX_CLOCK_DRIFT } from '../../distributed-lock/src/core/engine/lease-keeper.js';
import { REDLOCK_NODE_TIMEOUT_MS } from '../../distributed-lock/src/core/locks/redlock/red-lock.js';
import type { Prng } from './prng.js';
import type { NetworkProfile } from './sim-link.js';

/** What the simulated callers do, each a weight (0: off in this run). */
export interface OperationMix {
  plain: number;
  reentrant: number;
  withLock: number;
  abort: number;
  fair: number;
  read: number;
  write: number;
  multi: number;
  semaphore: number;
  forever: number;
  /** A candidate of the leader election 'e' (stepping down after one section). */
  leader: number;
}

/** Which faults strike in this run's fault phase, and how often (per second of virtual time; 0: off). */
export interface FaultMix {
  resets: number;
  pauses: number;
  kills: number;
  restarts: number;
  outages: number;
  /** RedLock: one master lost for good (0 or 1: whether it happens in this run). */
  nodeLost: number;
  /** The failover shape: a replica promoted (0 or 1). */
  failovers: number;
  /**
   * Faults aimed at a moment (FoundationDB's "buggify"), each a chance per command: a renewal stalled
   * on its link (its lease may run out with the renewal on its way, which then succeeds), and a link
   * reset right after an acquisition or a release is sent (its outcome unknown: retried, or given back).
   */
  stallAtRenewal: number;
  resetAtSend: number;
  /**
   * A chance per renewal sent: its process pauses (a long GC) for 0.6 to 1 watchdog lease, and
   * handles the renewal's reply after what fell due meanwhile (see aimFaults).
   */
  pauseAtRenewal: number;
  /**
   * One process closes its client early in the calm, its callers busy (a rolling deploy), 0 or 1:
   * close() must cut its waits short and leave nothing of it in Redis (see checkNothingHeldAfterClose).
   */
  closes: number;
}

/**
 * Where the locks live: one Redis; RedLock over three independent ones (one of them may be lost for
 * good, or restart empty); or one Redis whose replica, missing the last writes, is promoted
 * (asynchronous replication's failover).
 */
export type Shape = 'single' | 'redlock' | 'failover';

/** One run, drawn from its seed: the world's shape, the workload, the network, the faults ("swarm" testing). */
export interface SimConfig {
  readonly seed: number;
  readonly shape: Shape;
  readonly processes: number;
  readonly actorsPerProcess: number;
  /** Names of the plain locks in play (few: contention is the point). */
  readonly names: readonly string[];
  readonly mix: OperationMix;
  readonly faults: FaultMix;
  readonly network: NetworkProfile;
  /**
   * The mean delay of the first process's links (with RedLock, its link to the last master) when it sits
   * on a slower link than the others (another zone), in ms; 0 when it does not. At most a tenth of the
   * operation timeout and a fortieth of the lease: a link slower than the timeout fails every call, and
   * a round trip must leave some of the lease valid (which is the timeout's and the lease's job to say,
   * not a race). With RedLock it may be slower than the time an attempt waits for one master: the two
   * others make the quorum.
   */
  readonly slowLinkMs: number;
  readonly operationTimeoutMs: number;
  readonly watchdogTimeoutMs: number;
  readonly handoverTurnMs: number;
  /** Explicit leases drawn for callers that give one (the others use the watchdog). */
  readonly leaseMs: readonly [number, number];
  /** How long a caller stays in its critical section. */
  readonly sectionMs: readonly [number, number];
  readonly waitMs: readonly [number, number];
  /** A caller's pause between two operations. */
  readonly thinkMs: readonly [number, number];
  readonly semaphoreSize: number;
  readonly fairQueueTimeoutMs: number;
  /** Largest drift of a process's clock rate from the true one (e.g. 0.001: 0.1 %). */
  readonly driftBound: number;
  /** Operations each caller makes from the start (faults strike meanwhile). */
  readonly operationsPerCaller: number;
  /** Virtual time during which faults strike. */
  readonly faultPhaseMs: number;
  /** When the calm begins: after the faults, and after whatever they left has had time to clear (see settleMs). */
  readonly calmAt: number;
  /** Operations each live caller makes in the calm, each with `calmWaitMs`: none may fail (liveness). */
  readonly calmOperations: number;
  readonly calmWaitMs: number;
}

/** The drift bound the library documents for process clocks against the server's (see LeaseKeeper). */
export const DOCUMENTED_DRIFT = MAX_CLOCK_DRIFT;

function weight(prng: Prng, on: number): number {
  return prng.chance(on) ? prng.int(1, 4) : 0;
}

/** Draws a run's configuration from its seed: each run picks its own mix of operations and faults. */
export function drawConfig(seed: number, prng: Prng): SimConfig {
  const operationTimeoutMs = prng.pick([50, 100, 250, 500]);
  const shapeDraw = prng.float();
  const shape: Shape = shapeDraw < 0.7 ? 'single' : shapeDraw < 0.85 ? 'redlock' : 'failover';
  const mix: OperationMix = {
    plain: prng.int(1, 4),
    reentrant: weight(prng, 0.4),
    withLock: weight(prng, 0.4),
    abort: weight(prng, 0.3),
    fair: weight(prng, 0.4),
    read: weight(prng, 0.3),
    write: weight(prng, 0.3),
    multi: weight(prng, 0.3),
    semaphore: weight(prng, 0.3),
    forever: weight(prng, 0.2),
    leader: 0, // drawn last (below): the seeds drawn before it keep their runs
  };
  if (mix.read > 0 && mix.write === 0) mix.write = 1;
  // RedLock mode has plain locks and multi-locks only (a fair queue, readers, a semaphore's line would
  // live on masters that can disagree).
  if (shape === 'redlock') mix.fair = mix.read = mix.write = mix.semaphore = 0;
  const faulty = prng.chance(0.85);
  const rate = (on: number, max: number): number => (faulty && prng.chance(on) ? prng.between(0.05, max) : 0);
  const faults: FaultMix = {
    resets: rate(0.5, 2),
    pauses: rate(0.4, 0.5),
    kills: rate(0.25, 0.15),
    restarts: rate(0.15, 0.1),
    outages: rate(0.2, 0.1),
    nodeLost: shape === 'redlock' && faulty && prng.chance(0.5) ? 1 : 0,
    failovers: shape === 'failover' ? 1 : 0,
    stallAtRenewal: 0, // drawn last (below), as the leader is
    resetAtSend: 0,
    closes: 0,
    pauseAtRenewal: 0,
  };
  const meanDelayMs = prng.pick([0.05, 0.2, 1, 3]);
  const network: NetworkProfile = {
    meanDelayMs,
    spikeChance: faulty && prng.chance(0.5) ? prng.between(0.001, 0.02) : 0,
    spikeMs: operationTimeoutMs * prng.between(0.5, 3),
    pubsubLossChance: faulty && prng.chance(0.4) ? prng.between(0.01, 0.2) : 0,
    pubsubLateChance: faulty && prng.chance(0.4) ? prng.between(0.01, 0.3) : 0,
    pubsubLateMs: prng.between(1, 500),
    resendChance: prng.chance(0.5) ? prng.float() : 0,
    offlineQueue: prng.chance(0.7),
    reconnectMs: prng.between(1, 200),
    calm: false,
    // A third of RedLock's step each way: a round trip in the calm is then well within it (a calm round
    // trip of 18 ms against a 16 ms step failed every attempt of a wait without a deadline: seed 11473).
    calmMaxDelayMs: shape === 'redlock' ? Math.max(1, Math.min(REDLOCK_NODE_TIMEOUT_MS, Math.floor(operationTimeoutMs / 3))) / 3 : Infinity,
  };
  const watchdogTimeoutMs = prng.pick([100, 300, 1000]);
  const fairQueueTimeoutMs = prng.pick([100, 300, 1000]);
  const config: SimConfig = {
    seed,
    shape,
    processes: prng.int(3, 6),
    actorsPerProcess: prng.int(1, 2),
    names: ['a', 'b', 'c'].slice(0, prng.int(1, 3)),
    mix,
    faults,
    network,
    operationTimeoutMs,
    watchdogTimeoutMs,
    handoverTurnMs: prng.pick([0, 20, 100]),
    leaseMs: [Math.max(30, watchdogTimeoutMs / 4), watchdogTimeoutMs],
    sectionMs: [0, prng.pick([5, 30, 100])],
    waitMs: [0, prng.pick([50, 500, 3000])],
    thinkMs: [0, prng.pick([10, 50, 200])],
    semaphoreSize: prng.int(1, 3),
    fairQueueTimeoutMs,
    driftBound: DOCUMENTED_DRIFT,
    operationsPerCaller: prng.int(3, 12),
    faultPhaseMs: prng.pick([300, 1000, 3000]),
    slowLinkMs: 0, // drawn last (below)
    calmAt: 0, // set below
    calmOperations: prng.int(1, 2),
    calmWaitMs: 30_000,
  };
  // Drawn after everything else, so that a seed whose mix has no leader runs as it did before leader
  // election joined the workloads (the mutants' recorded catching seeds stay valid).
  mix.leader = weight(prng, 0.3);
  faults.stallAtRenewal = faulty && prng.chance(0.2) ? prng.between(0.05, 0.5) : 0;
  faults.resetAtSend = faulty && prng.chance(0.2) ? prng.between(0.02, 0.2) : 0;
  faults.closes = prng.chance(0.2) ? 1 : 0;
  faults.pauseAtRenewal = faulty && prng.chance(0.2) ? prng.between(0.05, 0.3) : 0;
  const slowLinkMs = prng.chance(0.2) ? Math.min(meanDelayMs * prng.between(5, 20), operationTimeoutMs / 10, watchdogTimeoutMs / 40) : 0;
  return {
    ...config,
    slowLinkMs: slowLinkMs > meanDelayMs ? slowLinkMs : 0,
    calmAt: config.faultPhaseMs + settleMs(watchdogTimeoutMs, fairQueueTimeoutMs, operationTimeoutMs),
  };
}

/**
 * How long after the last fault the world may still be recovering (a dead holder's lease, a dead
 * waiter's place in a queue, a missed message found by the waiters' periodic look, a timeout or two):
 * liveness is judged only after it.
 */
export function settleMs(watchdogTimeoutMs: number, fairQueueTimeoutMs: number, operationTimeoutMs: number): number {
  return watchdogTimeoutMs + fairQueueTimeoutMs + 2 * WAITER_RECHECK_MS + 4 * operationTimeoutMs + 500;
}
