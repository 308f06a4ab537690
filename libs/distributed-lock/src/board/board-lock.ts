import type { LockHolderInfo, LockInspection, LockWaiterInfo } from '../core/index.js';
import type { BoardHolder, BoardLock, BoardLockKind, BoardWaiter } from './board-snapshot.js';
import type { WaiterClock } from './waiter-clock.js';

/** The plain lock a leadership campaigns for: `leader:<name>` (see LeaderElection). */
export const LEADER_PREFIX = 'leader:';

function holderOf(info: LockHolderInfo, role: BoardHolder['role']): BoardHolder {
  return {
    role,
    process: info.instance.label,
    self: info.instance.self,
    owner: info.owner,
    token: info.token,
    heldForMs: info.heldForMs,
    leaseLeftMs: info.remainingLeaseMs,
    renewal: info.grant ? 'grant' : info.watchdog === undefined ? 'unknown' : info.watchdog ? 'watchdog' : 'fixed',
    holds: info.holds,
    permits: info.permits,
  };
}

/**
 * The waiters in order, each with how long it has waited: callers of this process from the
 * inspection's own timing (exact), others from when the board first saw them (see WaiterClock).
 */
function waitersOf(inspection: LockInspection, clock: WaiterClock, now: number): BoardWaiter[] {
  const key = `${inspection.kind}:${inspection.name}`;
  const seenBefore = clock.look(key, now);
  const local = [...inspection.waitingHereForMs];
  const waiters: BoardWaiter[] = inspection.waiting.map((waiter: LockWaiterInfo) => {
    const plain = inspection.kind === 'reentrant'; // a waiting process's mark, naming its first caller
    if (waiter.instance.self && local.length > 0) {
      // A plain lock's mark stands for every caller here (the longest wait shown); a queue entry is one caller, in order.
      const waitedMs = plain ? local[0]! : local.shift()!;
      return { ...common(waiter), callers: plain ? inspection.waitingHere : undefined, waitedMs, timing: 'exact' };
    }
    const seen = clock.seen(key, plain ? waiter.instance.clientId : (waiter.owner ?? waiter.instance.clientId), now, seenBefore);
    return { ...common(waiter), callers: undefined, waitedMs: seen.waitedMs, timing: seen.atLeast ? 'at-least' : 'seen' };
  });
  // Callers here that Redis does not show in line yet (between their attempt and their mark): shown after the line.
  if (inspection.waiting.length === 0 && inspection.waitingHere > 0) {
    waiters.push({
      position: 1,
      process: 'this process',
      self: true,
      owner: undefined,
      permits: undefined,
      callers: inspection.waitingHere,
      waitedMs: local[0] ?? 0,
      timing: 'exact',
    });
  }
  return waiters;
}

function common(waiter: LockWaiterInfo): Pick<BoardWaiter, 'position' | 'process' | 'self' | 'owner' | 'permits'> {
  return { position: waiter.position, process: waiter.instance.label, self: waiter.instance.self, owner: waiter.owner, permits: waiter.permits };
}

/** One lock as the board shows it, from its inspection. */
export function boardLockOf(inspection: LockInspection, clock: WaiterClock, now: number, forceUnlock: boolean): BoardLock {
  const leader = inspection.kind === 'reentrant' && inspection.name.startsWith(LEADER_PREFIX);
  const kind: BoardLockKind = leader ? 'leader' : inspection.kind;
  const holders: BoardHolder[] = [];
  if (inspection.holder) holders.push(holderOf(inspection.holder, leader ? 'leader' : inspection.kind === 'read-write' ? 'writer' : 'holder'));
  for (const reader of inspection.readers) holders.push(holderOf(reader, 'reader'));
  for (const acquisition of inspection.permitHolders) holders.push(holderOf(acquisition, 'permits'));
  const waiters = waitersOf(inspection, clock, now);
  return {
    name: inspection.name,
    kind,
    state: inspection.locked ? 'held' : waiters.length > 0 ? 'waiting' : 'free',
    holders,
    semaphore: inspection.semaphore ? { used: inspection.semaphore.used, size: inspection.semaphore.size } : undefined,
    waiters,
    lastToken: inspection.lastToken,
    canForceUnlock: forceUnlock && inspection.locked && inspection.kind !== 'semaphore',
  };
}
