import { NOT_AFTER } from '../../distributed-lock/src/core/scripts/lock-script.js';
import type { ServerMutation } from './sim-server.js';

/**
 * A known bug, put back on purpose by the simulator (never by a flag in the library): the simulator
 * must catch every one of them, which is what shows that its faults and invariants can see that kind
 * of bug at all. Server-side mutants rewrite the library's Lua or its arguments as the simulated
 * server receives them; a text rewrite that no longer matches the library's scripts fails loudly.
 */
export interface Mutant {
  readonly name: string;
  /** The bug, and what it broke when it was real. */
  readonly description: string;
  readonly server?: ServerMutation;
  /** A change to the library's objects for the run; returns what undoes it. */
  readonly apply?: () => () => void;
}

/** A rewrite of a script's text that must find `from` in at least one script of a run (see Mutant). */
function luaRewrite(from: string, to: string): (lua: string) => string {
  return (lua) => (lua.includes(from) ? lua.split(from).join(to) : lua);
}

export const MUTANTS: readonly Mutant[] = [
  {
    name: 'late-guard-off',
    description:
      'scripts run past their not-after deadline (the guard of round 3): an acquisition its caller gave up on, run late by a reconnect or a NOSCRIPT resend, leaves a phantom hold; a late release drops a hold taken after it',
    server: {
      name: 'late-guard-off',
      argv: (argv) => argv.map((arg, i) => (i === argv.length - 1 && arg.startsWith(NOT_AFTER) ? NOT_AFTER : arg)),
    },
  },
  {
    name: 'fencing-floor-off',
    description: 'fencing tokens not floored by the server clock: after Redis loses its data the counter starts again at 1, below tokens a resource has seen',
    server: { name: 'fencing-floor-off', lua: luaRewrite('if token <= floor then', 'if false then') },
  },
];

export function mutantNamed(name: string): Mutant {
  const mutant = MUTANTS.find((each) => each.name === name);
  if (!mutant) throw new Error(`no mutant "${name}"; known: ${MUTANTS.map((each) => each.name).join(', ')}`);
  return mutant;
}
