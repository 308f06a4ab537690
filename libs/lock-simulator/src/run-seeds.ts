import type { LuaVm } from '../../distributed-lock/src/memory/lua-vm.js';
import { whenLuaLoaded } from '../../distributed-lock/src/memory/lua-vm.js';
import type { InvariantName } from './invariants.js';
import { mutantNamed } from './mutants.js';
import { simulate, type RunResult } from './simulation.js';

/** What a batch of seeds came to. */
export interface SeedsReport {
  readonly seeds: number;
  readonly events: number;
  readonly virtualMs: number;
  /** The first failing runs (seed, invariants broken, first violation), in seed order. */
  readonly failures: { seed: number; invariants: InvariantName[]; first: string }[];
  /** Seeds whose second run told another story (see `repeat`). */
  readonly nondeterministic: number[];
  /** How many runs applied the mutant's rewrite (0: the mutant no longer matches the library). */
  readonly mutantApplied: number;
  /** A hunt's seeds that failed with the mutant and without it too (not counted as catching it). */
  readonly failingWithout: number[];
}

let loaded: LuaVm | undefined;

/** The worker's Lua VM (loaded once, then shared by every run and server). */
export async function luaVm(): Promise<LuaVm> {
  loaded ??= await whenLuaLoaded((vm) => vm);
  return loaded;
}

/**
 * Runs seeds `from` .. `from + count - 1` one after the other. `repeat`: run each seed twice and compare
 * the stories' hashes. `stopAtFirst`: stop at the first failing seed (a mutant's hunt).
 */
export async function runSeeds(options: {
  from: number;
  count: number;
  mutant?: string;
  repeat?: boolean;
  stopAtFirst?: boolean;
  maxFailures?: number;
}): Promise<SeedsReport> {
  const vm = await luaVm();
  const mutant = options.mutant ? mutantNamed(options.mutant) : undefined;
  const failures: SeedsReport['failures'] = [];
  const nondeterministic: number[] = [];
  const failingWithout: number[] = [];
  let events = 0;
  let virtualMs = 0;
  let seeds = 0;
  let mutantApplied = 0;
  for (let seed = options.from; seed < options.from + options.count; seed++) {
    const applied = { value: false };
    const result: RunResult = await simulate(vm, seed, { mutant, mutantApplied: applied });
    seeds++;
    events += result.events;
    virtualMs += result.virtualMs;
    if (applied.value) mutantApplied++;
    if (options.repeat) {
      const again = await simulate(vm, seed, { mutant });
      if (again.hash !== result.hash) nondeterministic.push(seed);
    }
    // A hunt counts a seed that fails with the mutant only if it is clean without it (the control rule).
    if (result.violations.length > 0 && mutant && (await simulate(vm, seed, {})).violations.length > 0) {
      failingWithout.push(seed);
      continue;
    }
    if (result.violations.length > 0) {
      const invariants = [...new Set(result.violations.map((violation) => violation.invariant))];
      if (failures.length < (options.maxFailures ?? 20)) failures.push({ seed, invariants, first: result.violations[0]!.detail.split('\n')[0]! });
      if (options.stopAtFirst) break;
    }
  }
  return { seeds, events, virtualMs, failures, nondeterministic, mutantApplied, failingWithout };
}
