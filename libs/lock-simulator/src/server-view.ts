import { inspectLock, type InspectLockReply } from '../../distributed-lock/src/core/inspection/inspect-lock.script.js';
import { LockKeys } from '../../distributed-lock/src/core/scripts/lock-keys.js';
import type { LuaVm } from '../../distributed-lock/src/memory/lua-vm.js';
import type { Family } from './holds.js';
import type { SimServer } from './sim-server.js';

/**
 * Who a server lists as holding one lock right now, read with the library's own inspection script
 * (so the simulator repeats no kind's key layout), run directly on the server's data: no network,
 * no client, nothing changed.
 */
export class ServerView {
  private readonly keys: LockKeys;

  constructor(
    private readonly vm: LuaVm,
    prefix: string,
  ) {
    this.keys = new LockKeys(prefix, false);
    vm.compile(inspectLock.lua, inspectLock.sha);
  }

  /** The owners holding `name` of `family` on `server` (live leases only). */
  holders(server: SimServer, family: Family, name: string): string[] {
    const { keys } = this;
    const fair = keys.fairQueue(name);
    const semaphore = keys.semaphore(name);
    const args = {
      plain: keys.lock(name),
      fence: keys.fence(name),
      fair: keys.lock(name, ':fair'),
      fairQueue: fair.queue,
      fairQueueDeadlines: fair.deadlines,
      readWrite: keys.lock(name, ':rw'),
      readers: keys.readers(name),
      semaphore: semaphore.state,
      semaphoreHolders: semaphore.holders,
      semaphoreQueue: semaphore.queue,
      semaphoreQueueDeadlines: semaphore.queueDeadlines,
    };
    const reply = this.vm.run(server.keyspace, inspectLock.sha, inspectLock.keys(args), []) as unknown as InspectLockReply;
    const [, , plain, fairState, , readWrite, semaphoreState] = reply;
    switch (family) {
      case 'plain':
        return plain.length > 0 && plain[0] ? [plain[0]] : [];
      case 'fair':
        return fairState.length > 0 && fairState[0] ? [fairState[0]] : [];
      case 'rw': {
        if (readWrite.length === 0) return [];
        const [writer, readers] = readWrite;
        return [...(writer.length > 0 ? [writer[0]!] : []), ...readers.map((reader) => reader[0])];
      }
      case 'semaphore':
        return semaphoreState.length > 0 ? semaphoreState[1]!.map((holder) => holder[0]) : [];
    }
  }

  /** The keys a lock of `family` and `name` keeps (to tell which scripts touched it). */
  tag(name: string): string {
    return `{${name}}`;
  }
}
