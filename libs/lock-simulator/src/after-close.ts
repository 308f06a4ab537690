import type { SimProcess } from './sim-process.js';
import type { SimWorld } from './sim-world.js';

/**
 * Once the clients of `closed` have closed (in the calm: every lease of the fault phase run out, the
 * network healthy): no lock is held in the name of a caller of theirs (close() waits for its releases,
 * give-backs and withdrawals). A hold left here would block everyone for its lease with nobody behind
 * it; the check at the end of the run would miss it, the lease having run out by then.
 */
export function checkNothingHeldAfterClose(world: SimWorld, closed: readonly SimProcess[]): void {
  const names = new Set(closed.map((process) => process.name));
  for (const server of world.servers) {
    if (!server.up) continue;
    const { keyspace } = server;
    for (const key of keyspace.keys()) {
      if (keyspace.type(key) !== 'hash') continue;
      const state = keyspace.hgetall(key);
      if (state['owner'] === undefined || !names.has(state['owner'].split(':')[0]!)) continue;
      world.invariants.violate(
        'left-after-close',
        `${server.name} keeps ${key} = ${JSON.stringify(state)} (pttl ${keyspace.pttl(key)}) once the client of ${state['owner'].split(':')[0]} closed`,
      );
    }
  }
}
