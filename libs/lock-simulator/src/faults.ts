import { MemoryKeyspace } from '../../distributed-lock/src/memory/memory-keyspace.js';
import type { Prng } from './prng.js';
import type { FaultMix } from './sim-config.js';
import type { SimServer } from './sim-server.js';
import type { SimWorld } from './sim-world.js';

type Fault = keyof FaultMix;
const FAULTS: readonly Fault[] = ['resets', 'pauses', 'kills', 'restarts', 'outages'];

/**
 * Schedules the run's faults over its fault phase: each kind at its rate (a Poisson process drawn
 * from the seed), each striking a victim drawn from the seed. After the phase, nothing more strikes,
 * and what was down comes back.
 */
export function scheduleFaults(world: SimWorld, prng: Prng): void {
  const { faults, faultPhaseMs } = world.config;
  // Now and then a process dies as it starts (its first commands written, not all answered).
  if (faults.kills > 0 && prng.chance(0.3)) world.scheduler.at(prng.between(0, 5), () => strike(world, 'kills', prng.fork()));
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
}

function strike(world: SimWorld, fault: Fault, prng: Prng): void {
  const live = world.processes.filter((process) => !process.dead);
  const server = world.servers[0]!;
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
  world.log.line(server.name, `${wiped ? 'RESTART without its data' : 'OUTAGE'} for ${forMs.toFixed(3)} ms`);
  server.up = false;
  for (const process of world.processes) for (const link of process.links) link.reset(wiped ? 'server restart' : 'outage');
  if (wiped) {
    server.replaceData(new MemoryKeyspace(server.clock));
    world.invariants.dataLost();
  }
  world.scheduler.after(forMs, () => {
    server.up = true;
    world.log.line(server.name, 'UP');
  });
}
