import { MemoryKeyspace } from '../../distributed-lock/src/memory/memory-keyspace.js';
import type { Prng } from './prng.js';
import type { FaultMix } from './sim-config.js';
import { checkNothingHeldAfterClose } from './after-close.js';
import type { Link } from './sim-link.js';
import type { SimProcess } from './sim-process.js';
import type { SimServer } from './sim-server.js';
import type { SimWorld } from './sim-world.js';

type Fault = Exclude<keyof FaultMix, 'stallAtRenewal' | 'pauseAtRenewal' | 'resetAtSend' | 'closes'>;
const FAULTS: readonly Fault[] = ['resets', 'pauses', 'kills', 'restarts', 'outages'];
/** How often a primary's replica copies its data (the failover shape): it lags by up to this, plus the lag drawn. */
const REPLICATION_STEP_MS = 20;

/**
 * Schedules the run's faults over its fault phase: each kind at its rate (a Poisson process drawn
 * from the seed), each striking a victim drawn from the seed. After the phase, nothing more strikes,
 * and what was down comes back.
 */
export function scheduleFaults(world: SimWorld, prng: Prng): void {
  const { faults, faultPhaseMs } = world.config;
  // Now and then a process dies as it starts (its first commands written, not all answered).
  if (faults.kills > 0 && prng.chance(0.3)) world.scheduler.at(prng.between(0, 5), () => strike(world, 'kills', prng.fork()));
  if (faults.nodeLost > 0) {
    const server = prng.pick(world.servers);
    world.scheduler.at(prng.between(0, faultPhaseMs), () => down(world, server, Infinity, false));
  }
  if (faults.failovers > 0) {
    const server = world.servers[0]!;
    for (let at = 0; at < faultPhaseMs; at += REPLICATION_STEP_MS) world.scheduler.at(at, () => server.keepCopy(1000));
    const draw = prng.fork();
    world.scheduler.at(prng.between(0, faultPhaseMs), () => failover(world, server, draw));
  }
  world.scheduler.at(faultPhaseMs, () => {
    world.config.network.calm = true;
    world.log.line('SIM', 'faults stop (the network is healthy from now on)');
  });
  for (const fault of FAULTS) {
    const perSecond = faults[fault];
    if (perSecond <= 0) continue;
    for (let at = prng.exponential(1000 / perSecond); at < faultPhaseMs; at += prng.exponential(1000 / perSecond)) {
      const draw = prng.fork();
      world.scheduler.at(at, () => strike(world, fault, draw));
    }
  }
  if (faults.closes > 0) {
    const draw = prng.fork();
    world.scheduler.at(world.config.calmAt + prng.between(0, 60), () => closeOne(world, draw));
  }
}

/**
 * A process closes its client while its callers are at work (a rolling deploy), in the calm: once
 * close() has ended, Redis may list nothing in its name. Only with three processes left at least, so
 * that the others still contend.
 */
function closeOne(world: SimWorld, prng: Prng): void {
  const live = world.processes.filter((process) => !process.dead && !process.closed);
  if (live.length < 3) return;
  const process = prng.pick(live);
  world.log.line(process.name, 'CLOSES its client (its callers at work)');
  process.closed = true;
  void process.close().then(() => {
    world.log.line(process.name, 'closed');
    checkNothingHeldAfterClose(world, [process]);
  });
}

/**
 * Aims the run's faults at a moment on `link` of `process` (see FaultMix): until the calm, a renewal
 * sent may stall its link for about an operation timeout (and pause its process), or pause its process
 * with its reply held back until just after the pause; an acquisition or a release sent may have its
 * link reset before it ran, or after it ran and before its reply. Their own streams of draws, taken only in runs that have these faults.
 */
export function aimFaults(world: SimWorld, process: SimProcess, link: Link): void {
  const { faults, network, operationTimeoutMs, watchdogTimeoutMs } = world.config;
  if (faults.stallAtRenewal === 0 && faults.resetAtSend === 0 && faults.pauseAtRenewal === 0) return;
  const prng = world.prng.fork();
  // Forked only in runs with it: the runs drawn before it existed keep their draws.
  const pausing = faults.pauseAtRenewal > 0 ? world.prng.fork() : undefined;
  link.onTransmit = (label) => {
    if (network.calm) return undefined;
    if (RENEWAL.test(label)) {
      if (prng.chance(faults.stallAtRenewal)) {
        const stallMs = prng.between(0.3, 1.5) * operationTimeoutMs;
        // Half the time its process is paused too, for less than the stall: it may wake past its lease's
        // end with the renewal still on its way (it then succeeds), and act on the lock meanwhile.
        if (prng.chance(0.5)) process.pause(prng.between(0.5, 1) * stallMs);
        return { requestMs: stallMs };
      }
      if (pausing?.chance(faults.pauseAtRenewal)) {
        // A pause (a long GC) right after the renewal went: it runs in time, but its reply is handled
        // after what fell due meanwhile (Node runs due timers before I/O), past the lease's end as this
        // process counts it: the end of the work the lock protected sees it not held, then the renewal
        // says it is.
        const pauseMs = pausing.between(0.6, 1) * watchdogTimeoutMs;
        process.pause(pauseMs);
        return { replyMs: pauseMs };
      }
      return undefined;
    }
    if (!SENT_THEN_RESET.test(label) || !prng.chance(faults.resetAtSend)) return undefined;
    const what = label.replace(/^EVAL /, '').split(' ')[0];
    // Half the time before it reaches the server (it never ran), half right after it ran (its reply lost):
    // either way its caller cannot tell, and the client may send it again once reconnected.
    if (prng.chance(0.5)) return { resetAfterRun: `fault right after ${what} ran, before its reply` };
    world.scheduler.after(0, () => link.reset(`fault right after ${what} was sent, before it ran`));
    return undefined;
  };
}

const RENEWAL = /^(EVAL )?dlock\w*Renew/;
/** Acquisitions and releases (a batch too): their outcome unknown, a retry or a give-back follows. */
const SENT_THEN_RESET = /^(EVAL )?dlock(\w*Acquire|\w*Release|Batch)/;

function strike(world: SimWorld, fault: Fault, prng: Prng): void {
  const live = world.processes.filter((process) => !process.dead);
  const server = prng.pick(world.servers);
  const { config } = world;
  switch (fault) {
    case 'resets': {
      const process = live.length > 0 ? prng.pick(live) : undefined;
      const link = process && process.links.length > 0 ? prng.pick(process.links) : undefined;
      link?.reset('fault');
      return;
    }
    case 'pauses': {
      if (live.length === 0) return;
      prng.pick(live).pause(prng.between(0.1, 2.5) * config.watchdogTimeoutMs);
      return;
    }
    case 'kills': {
      if (live.length <= 2) return;
      prng.pick(live).kill();
      return;
    }
    case 'restarts':
      return down(world, server, prng.between(10, 2000), true);
    case 'outages':
      return down(world, server, prng.between(10, 3 * config.operationTimeoutMs + 500), false);
  }
}

/** The server goes down for `forMs` (every connection to it reset), and comes back, empty if `wiped`. */
function down(world: SimWorld, server: SimServer, forMs: number, wiped: boolean): void {
  if (!server.up) return;
  world.log.line(server.name, forMs === Infinity ? 'LOST for good' : `${wiped ? 'RESTART without its data' : 'OUTAGE'} for ${forMs.toFixed(3)} ms`);
  server.up = false;
  resetLinksTo(world, server, wiped ? 'server restart' : 'outage');
  if (wiped) {
    server.replaceData(new MemoryKeyspace(server.clock));
    world.invariants.dataLost();
  }
  if (forMs === Infinity) return;
  world.scheduler.after(forMs, () => {
    server.up = true;
    world.log.line(server.name, 'UP');
  });
}

/**
 * The primary fails and its replica takes over (an election's pause), with the data it had: what the
 * primary had some milliseconds before (asynchronous replication), and its own clock.
 */
function failover(world: SimWorld, server: SimServer, prng: Prng): void {
  if (!server.up) return;
  const lagMs = prng.between(0, 100);
  const electionMs = prng.between(10, 500);
  world.log.line(server.name, `FAILOVER: the replica, ${lagMs.toFixed(1)} ms behind, is promoted after ${electionMs.toFixed(0)} ms`);
  const promoted = server.copyAsOf(lagMs);
  server.up = false;
  resetLinksTo(world, server, 'failover');
  server.replaceData(promoted);
  server.skewMs = prng.between(-2, 2);
  world.invariants.dataLost();
  world.scheduler.after(electionMs, () => {
    server.up = true;
    world.log.line(server.name, 'UP (the promoted replica)');
  });
}

function resetLinksTo(world: SimWorld, server: SimServer, why: string): void {
  for (const process of world.processes) for (const link of process.links) if (link.server === server) link.reset(why);
}
