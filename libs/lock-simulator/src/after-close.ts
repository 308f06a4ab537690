import type { SimProcess } from './sim-process.js';
import type { SimWorld } from './sim-world.js';

/**
 * Once the clients of `closed` have closed (in the calm: every lease of the fault phase run out, the
 * network healthy): no lock is held in the name of a caller of theirs (close() waits for its releases,
 * give-backs and withdrawals), unless close() said it gave up on some after its bound, on the slow link. A hold left here would block everyone for its lease with nobody behind
 * it; the check at the end of the run would miss it, the lease having run out by then.
 */
export function checkNothingHeldAfterClose(world: SimWorld, closed: readonly SimProcess[]): void {
  const names = new Set<string>();
  for (const process of closed) {
    if (!process.closeGaveUp || !world.onSlowLink(process)) {
      names.add(process.name);
      continue;
    }
    // On the slow link, the work an attempt's late reply starts may not fit in close()'s bound (an
    // operation timeout from its start). It said it gave up, as documented: only once its bound had
    // passed (by its own clock), not before. On the others' links it never needs to.
    const boundMs = world.config.operationTimeoutMs * (1 - world.config.driftBound) - 1;
    world.log.line(process.name, `close() gave up after ${process.closeTookMs.toFixed(3)} ms (said so): what it held is not checked`);
    if (process.closeTookMs < boundMs)
      world.invariants.violate(
        'left-after-close',
        `${process.name}'s close() gave up after ${process.closeTookMs.toFixed(3)} ms, before its bound (${boundMs} ms)`,
      );
  }
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
