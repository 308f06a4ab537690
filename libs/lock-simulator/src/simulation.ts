import { restartOwnerSequence } from '../../distributed-lock/src/core/context/lock-context.js';
import type { LuaVm } from '../../distributed-lock/src/memory/lua-vm.js';
import { checkNothingHeldAfterClose } from './after-close.js';
import { scheduleFaults } from './faults.js';
import type { Violation } from './invariants.js';
import type { Mutant } from './mutants.js';
import { Prng } from './prng.js';
import { drawConfig, type SimConfig } from './sim-config.js';
import { SimProcess } from './sim-process.js';
import { SimWorld } from './sim-world.js';
import { Actor } from './workload.js';

export interface RunResult {
  readonly seed: number;
  readonly violations: readonly Violation[];
  /** The hash of the run's story (the same seed must give the same hash). */
  readonly hash: string;
  readonly events: number;
  readonly virtualMs: number;
  readonly config: SimConfig;
  /** The story: every line when asked for, else the last ones. */
  readonly story: readonly string[];
}

/** Virtual time after the last operation for everything with a lease to run out (inspection labels: 60 s). */
const EXPIRY_MS = 61_000;

/**
 * One run of the real library under one seed: the seed draws the world (processes, network, faults,
 * workload), the processes work through a fault phase and then a calm one, stop, close, and the
 * store is left to expire; every invariant is checked on the way and at the end. Nothing but the seed
 * (and the mutant, if any) decides what happens: Math.random is the run's own generator while it runs.
 */
export async function simulate(
  vm: LuaVm,
  seed: number,
  options: { mutant?: Mutant; keepStory?: boolean; mutantApplied?: { value: boolean } } = {},
): Promise<RunResult> {
  // Owner ids count from 1 in every run, as in a process that runs this seed alone (`--seed S`).
  restartOwnerSequence();
  const root = new Prng(seed);
  const config = drawConfig(seed, root.fork());
  const world = new SimWorld(config, root.fork(), vm, options.mutant?.server, options.keepStory ?? false);
  const { scheduler, log, invariants } = world;
  const random = Math.random;
  const randomness = root.fork();
  Math.random = () => randomness.float();
  const onUnhandled = (reason: unknown): void => {
    invariants.violate('unexpected-error', `unhandled rejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`);
  };
  process.on('unhandledRejection', onUnhandled);
  const restore = options.mutant?.apply?.();
  try {
    log.line('SIM', `seed ${seed}${options.mutant ? ` mutant ${options.mutant.name}` : ''}: ${describeConfig(config)}`);
    const actors = root.fork();
    /** The processes of the callers still at work (one entry per caller). */
    const running = new Map<Actor, SimProcess>();
    for (let i = 0; i < config.processes; i++) {
      const rate = 1 + actors.between(-config.driftBound, config.driftBound);
      const process = new SimProcess(world, `p${i + 1}`, rate);
      world.processes.push(process);
      const streams = Array.from({ length: config.actorsPerProcess }, () => actors.fork());
      const callers = streams.map((stream, j) => new Actor(process, `${process.name}.${j + 1}`, stream));
      for (const caller of callers) running.set(caller, process);
      process.soon(() => {
        process.client.connect().then(
          () => callers.forEach((caller) => void caller.run().finally(() => running.delete(caller))),
          (error: unknown) => {
            log.line(process.name, `connect failed: ${(error as Error).message}`);
            for (const caller of callers) running.delete(caller);
          },
        );
      });
    }
    scheduleFaults(world, root.fork());
    // Until every caller of a live process is done (the dead ones' never are), or the time they could take.
    const deadline = config.calmAt + config.calmOperations * (config.calmWaitMs + 4 * config.operationTimeoutMs + 1000) + drainMs(config);
    await scheduler.runUntil(deadline, () => [...running.values()].every((process) => process.dead));
    log.line('SIM', 'callers done');
    for (const unanswered of world.calls.unanswered()) invariants.violate('stuck', `${unanswered}: no answer by the end of the run`);
    // Every lock of a call that ended was released, or is known lost: none kept (renewed by the watchdog
    // for good) with nobody left to release it. The calm has outlasted every retried release.
    for (const hold of world.callsEnded) world.checkKept(hold);
    const closing = world.processes.filter((process) => !process.dead).map((process) => process.close());
    log.line('SIM', 'clients close');
    let closed = false;
    void Promise.allSettled(closing).then(() => (closed = true));
    await scheduler.runUntil(scheduler.now + 5 * config.operationTimeoutMs + 2000, () => closed);
    if (!closed) invariants.violate('stuck', 'close() of a client did not end within its bound');
    else
      checkNothingHeldAfterClose(
        world,
        world.processes.filter((process) => !process.dead),
      );
    await scheduler.runUntil(scheduler.now + EXPIRY_MS);
    if (scheduler.runaway) invariants.violate('runaway', scheduler.runaway);
    else checkNothingLeft(world);
  } finally {
    restore?.();
    if (options.mutantApplied) options.mutantApplied.value = restore !== undefined || world.servers.some((server) => server.mutated);
    process.off('unhandledRejection', onUnhandled);
    Math.random = random;
  }
  return { seed, violations: invariants.violations, hash: log.hash, events: scheduler.executed, virtualMs: scheduler.now, config, story: log.story() };
}

/** How long callers may still need once no new operation starts: the longest wait, lease and a few timeouts. */
function drainMs(config: SimConfig): number {
  return config.waitMs[1] + 4 * config.watchdogTimeoutMs + 10 * config.operationTimeoutMs + 5000;
}

/**
 * Once every client closed and every lease ran out: no key may be left but the fence counter and the
 * semaphore's state (which keeps its size), with no holder or waiter in it.
 */
function checkNothingLeft(world: SimWorld): void {
  for (const server of world.servers) {
    if (!server.up) continue; // a master lost for good keeps what it had
    const { keyspace } = server;
    for (const key of keyspace.keys()) {
      if (key === 'lock:fence') continue;
      if (key.endsWith(':semaphore')) {
        // Its state keeps the size for good, and holders and waiters until a script next looks: only a
        // live one (a holder's lease, a waiter's place still running) is left behind.
        const state = keyspace.hgetall(key);
        const live = (zset: string, member: string): boolean => Number(keyspace.zscore(zset, member) ?? -Infinity) > server.keyspace.serverTimeMs();
        const busy = Object.keys(state).filter(
          (field) =>
            (field.startsWith('h:') && live(`${key}:holders`, field.slice(2))) || (field.startsWith('w:') && live(`${key}:queue-deadlines`, field.slice(2))),
        );
        if (busy.length === 0) continue;
        world.invariants.violate('left-behind', `${server.name} keeps ${key} = ${JSON.stringify(state)} after every client closed`);
        continue;
      }
      // A semaphore's holders and line (sorted sets of lease ends and place deadlines) are cleaned by
      // its next script too: left behind only with a member still live.
      const semaphoreLine = /:semaphore:(holders|queue|queue-deadlines)$/.exec(key);
      if (semaphoreLine) {
        const deadlines = semaphoreLine[1] === 'queue' ? key.replace(/:queue$/, ':queue-deadlines') : key;
        const now = keyspace.serverTimeMs();
        if (keyspace.zrange(key, 0, -1).every((member) => Number(keyspace.zscore(deadlines, member) ?? -Infinity) <= now)) continue;
      }
      world.invariants.violate('left-behind', `${server.name} keeps ${key} (pttl ${keyspace.pttl(key)}) after every client closed and every lease ran out`);
    }
  }
}

function describeConfig(config: SimConfig): string {
  const on = (record: object): string =>
    Object.entries(record)
      .filter(([, value]) => value !== 0)
      .map(([key, value]) => `${key}=${typeof value === 'number' ? Number(value.toFixed(3)) : value}`)
      .join(' ');
  return `${config.processes} processes x ${config.actorsPerProcess} callers on [${config.names.join(',')}]; ops {${on(config.mix)}}; faults {${on(config.faults) || 'none'}}; opTimeout ${config.operationTimeoutMs} ms, watchdog ${config.watchdogTimeoutMs} ms, turn ${config.handoverTurnMs} ms; delay ~${config.network.meanDelayMs} ms${config.slowLinkMs > 0 ? ` (p1 ~${Number(config.slowLinkMs.toFixed(2))} ms)` : ''}`;
}
