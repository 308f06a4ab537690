import type { InspectLockReply } from './inspect-lock.script.js';
import type { KindInspection } from './kind-inspection.js';
import type { InspectedLockKind, LockHolderInfo, LockInspection, LockInstanceInfo, LockWaiterInfo } from './lock-inspection.js';

/** A live queue, first to be served first: [owner, ms until its place expires, ...] (see LIVE_QUEUE_LUA). */
export type QueueState = (string | number)[];

/** The inspect script's reply for one name, with the clients it mentions. */
export interface InspectedName {
  readonly name: string;
  readonly reply: InspectLockReply;
}

/** Local facts the script cannot know: how long each caller of this process waiting for the kind has waited (ms, longest first). */
export type WaitingHere = (kind: InspectedLockKind) => readonly number[];

/** The client id in an owner id (`<client id>:<context>`). */
export function clientOf(owner: string): string {
  const colon = owner.indexOf(':');
  return colon < 0 ? owner : owner.slice(0, colon);
}

/** Every client id the reply mentions (holders, readers, waiting marks, queues), for their labels. */
export function clientsIn(reply: InspectLockReply, parts: readonly KindInspection[]): string[] {
  return parts.flatMap((part, i) => part.clients(reply[i + 2]));
}

/** A token as Redis stores it (a decimal string), as an exact number: tokens stay below 2^53 until 2255. */
function tokenOf(text: string | null): number {
  return text === null ? 0 : Number(text);
}

export function holder(
  owner: string,
  holds: string | null,
  token: string | null,
  renew: string | null,
  leftMs: number,
  now: number,
  instances: ReadonlyMap<string, LockInstanceInfo>,
  permits?: number,
  granted = false,
): LockHolderInfo {
  const value = tokenOf(token);
  const since = Math.floor(value / 1000);
  return {
    owner,
    instance: instances.get(clientOf(owner))!,
    holds: holds === null ? 0 : Number(holds),
    permits,
    token: value,
    heldForMs: since > 0 && since <= now ? now - since : undefined,
    remainingLeaseMs: leftMs,
    watchdog: renew === null ? undefined : renew === '1',
    grant: granted,
  };
}

/** The longest of the holders' leases, or -2 when nobody holds anything. */
export function longestLease(holders: readonly LockHolderInfo[]): number {
  return holders.length > 0 ? Math.max(...holders.map((h) => h.remainingLeaseMs)) : -2;
}

/** A live queue of callers (fair lock, semaphore); `wants`: the permits each asks for (semaphore). */
export function queued(queue: QueueState, instances: ReadonlyMap<string, LockInstanceInfo>, wants?: string[]): LockWaiterInfo[] {
  const waiting: LockWaiterInfo[] = [];
  for (let i = 0; i < queue.length; i += 2) {
    const owner = String(queue[i]);
    const permits = wants === undefined ? undefined : Number(wants[i / 2] ?? 1);
    waiting.push({ position: waiting.length + 1, instance: instances.get(clientOf(owner))!, owner, expiresInMs: Number(queue[i + 1]), permits });
  }
  return waiting;
}

/**
 * The inspections of every kind kept under one name (plain, fair, read-write, semaphore: one per part),
 * from the script's reply and the labels of the clients it mentions.
 */
export function inspectionsOf(
  { name, reply }: InspectedName,
  parts: readonly KindInspection[],
  instances: ReadonlyMap<string, LockInstanceInfo>,
  waitingHere: WaitingHere,
): Partial<Record<InspectedLockKind, LockInspection>> {
  const [now, fence] = reply;
  const lastToken = fence === null ? undefined : Number(fence);
  const inspections: Partial<Record<InspectedLockKind, LockInspection>> = {};
  parts.forEach((part, i) => {
    const waitingHereForMs = waitingHere(part.kind);
    const base = { waitingHere: waitingHereForMs.length, waitingHereForMs, lastToken };
    inspections[part.kind] = part.read(reply[i + 2], { name, now, instances, base });
  });
  return inspections;
}

/** Whether an inspection shows anything: a holder, readers or waiters. */
export function inUse(inspection: LockInspection): boolean {
  return inspection.locked || inspection.waiting.length > 0 || inspection.waitingHere > 0;
}

/** The client ids of a live queue's callers. */
export function queueClients(queue: QueueState): string[] {
  const clients: string[] = [];
  for (let i = 0; i < queue.length; i += 2) clients.push(clientOf(String(queue[i])));
  return clients;
}
