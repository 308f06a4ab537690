import { inspectionsOf } from '../../distributed-lock/src/core/inspection/inspection-reply.js';
import type { InspectLockReply } from '../../distributed-lock/src/core/inspection/inspect-lock.script.js';
import type { InspectedLockKind } from '../../distributed-lock/src/core/inspection/lock-inspection.js';
import { LOCK_INSPECTION } from '../../distributed-lock/src/core/lock-scripts.js';
import { LockKeys } from '../../distributed-lock/src/core/scripts/lock-keys.js';
import type { LuaVm } from '../../distributed-lock/src/memory/lua-vm.js';
import type { Family } from './holds.js';
import type { SimServer } from './sim-server.js';

/** The inspected kind of each family of locks the simulator runs. */
const KIND: Record<Family, InspectedLockKind> = { plain: 'reentrant', fair: 'fair', rw: 'read-write', semaphore: 'semaphore' };

/**
 * Who a server lists as holding one lock right now, read with the library's own inspection script and
 * the kinds' readings of it (so the simulator repeats no kind's key layout), run directly on the
 * server's data: no network, no client, nothing changed.
 */
export class ServerView {
  private readonly keys: LockKeys;

  constructor(
    private readonly vm: LuaVm,
    prefix: string,
  ) {
    this.keys = new LockKeys(prefix, false);
    vm.compile(LOCK_INSPECTION.script.lua, LOCK_INSPECTION.script.sha);
  }

  /** The owners holding `name` of `family` on `server` (live leases only). */
  holders(server: SimServer, family: Family, name: string): string[] {
    const { script, parts } = LOCK_INSPECTION;
    const reply = this.vm.run(server.keyspace, script.sha, script.keys({ keys: this.keys, name }), []) as unknown as InspectLockReply;
    const inspection = inspectionsOf({ name, reply }, parts, new Map(), () => [])[KIND[family]]!;
    return [
      ...(inspection.holder ? [inspection.holder.owner] : []),
      ...inspection.readers.map((reader) => reader.owner),
      ...inspection.permitHolders.map((each) => each.owner),
    ];
  }

  /** The keys a lock of `family` and `name` keeps (to tell which scripts touched it). */
  tag(name: string): string {
    return `{${name}}`;
  }
}
