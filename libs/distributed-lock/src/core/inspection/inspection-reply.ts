import type { ExclusiveState, InspectLockReply, QueueState, ReadWriteHolderState, SemaphoreState } from './inspect-lock.script.js';
import type { InspectedLockKind, LockHolderInfo, LockInspection, LockInstanceInfo, LockWaiterInfo } from './lock-inspection.js';

/** The inspect script's reply for one name, with the clients it mentions. */
export interface InspectedName {
  readonly name: string;
  readonly reply: InspectLockReply;
}

/** Local facts the script cannot know: how long each caller of this process waiting for the kind has waited (ms, longest first). */
export type WaitingHere = (kind: InspectedLockKind) => readonly number[];

const GRANT_SUFFIX = ':grant';

/** The client id in an owner id (`<client id>:<context>`) or a grant placeholder (`<client id>:grant`). */
export function clientOf(owner: string): string {
  const colon = owner.indexOf(':');
  return colon < 0 ? owner : owner.slice(0, colon);
}

/** Every client id the reply mentions (holders, readers, waiting marks, queues), for their labels. */
export function clientsIn(reply: InspectLockReply): string[] {
  const [, , plain, fair, queue, readWrite, semaphore] = reply;
  const clients: string[] = [];
  for (const state of [plain, fair]) {
    if (state.length !== 6) continue;
    if (state[0]) clients.push(clientOf(state[0]));
    for (let i = 0; i < state[5].length; i += 2) clients.push(state[5][i]!);
  }
  for (let i = 0; i < queue.length; i += 2) clients.push(clientOf(String(queue[i])));
  if (readWrite.length === 2) {
    const [writer, readers] = readWrite;
    if (writer.length === 5) clients.push(clientOf(writer[0]));
    for (const reader of readers) clients.push(clientOf(reader[0]));
  }
  if (semaphore.length === 4) {
    for (const acquisition of semaphore[1]) clients.push(clientOf(acquisition[0]));
    for (let i = 0; i < semaphore[2].length; i += 2) clients.push(clientOf(String(semaphore[2][i])));
  }
  return clients;
}

/** A token as Redis stores it (a decimal string), as an exact number: tokens stay below 2^53 until 2255. */
function tokenOf(text: string | null): number {
  return text === null ? 0 : Number(text);
}

function holder(
  owner: string,
  holds: string | null,
  token: string | null,
  renew: string | null,
  leftMs: number,
  now: number,
  instances: Map<string, LockInstanceInfo>,
  permits?: number,
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
    grant: owner.endsWith(GRANT_SUFFIX),
  };
}

function exclusive(
  name: string,
  kind: 'reentrant' | 'fair',
  state: ExclusiveState,
  waiting: LockWaiterInfo[],
  base: Pick<LockInspection, 'waitingHere' | 'waitingHereForMs' | 'lastToken'>,
  now: number,
  instances: Map<string, LockInstanceInfo>,
): LockInspection {
  const lock = state.length === 6 && state[0] ? holder(state[0], state[1], state[2], state[3], state[4], now, instances) : undefined;
  return {
    name,
    kind,
    locked: lock !== undefined,
    holder: lock,
    readers: [],
    permitHolders: [],
    semaphore: undefined,
    remainingLeaseMs: lock ? lock.remainingLeaseMs : -2,
    waiting,
    ...base,
  };
}

/** The longest of the holders' leases, or -2 when nobody holds anything. */
function longestLease(holders: readonly LockHolderInfo[]): number {
  return holders.length > 0 ? Math.max(...holders.map((h) => h.remainingLeaseMs)) : -2;
}

/** The plain lock's waiting processes, in arrival order (their marks' numbers). */
function marks(state: ExclusiveState, instances: Map<string, LockInstanceInfo>): LockWaiterInfo[] {
  if (state.length !== 6) return [];
  const pairs: [string, number][] = [];
  for (let i = 0; i < state[5].length; i += 2) pairs.push([state[5][i]!, Number(state[5][i + 1])]);
  return pairs
    .sort((a, b) => a[1] - b[1])
    .map(([client], i) => ({ position: i + 1, instance: instances.get(client)!, owner: undefined, expiresInMs: undefined, permits: undefined }));
}

/** A live queue of callers (fair lock, semaphore); `wants`: the permits each asks for (semaphore). */
function queued(queue: QueueState, instances: Map<string, LockInstanceInfo>, wants?: string[]): LockWaiterInfo[] {
  const waiting: LockWaiterInfo[] = [];
  for (let i = 0; i < queue.length; i += 2) {
    const owner = String(queue[i]);
    const permits = wants === undefined ? undefined : Number(wants[i / 2] ?? 1);
    waiting.push({ position: waiting.length + 1, instance: instances.get(clientOf(owner))!, owner, expiresInMs: Number(queue[i + 1]), permits });
  }
  return waiting;
}

function semaphoreInspection(
  name: string,
  state: SemaphoreState,
  base: Pick<LockInspection, 'waitingHere' | 'waitingHereForMs' | 'lastToken'>,
  now: number,
  instances: Map<string, LockInstanceInfo>,
): LockInspection {
  const [size, acquisitions, line, wants] = state.length === 4 ? state : [null, [], [], []];
  const permitHolders = acquisitions.map(([owner, permits, token, renew, leftMs]) => holder(owner, '1', token, renew, leftMs, now, instances, Number(permits)));
  const used = permitHolders.reduce((sum, h) => sum + h.permits!, 0);
  return {
    name,
    kind: 'semaphore',
    locked: permitHolders.length > 0,
    holder: undefined,
    readers: [],
    permitHolders,
    semaphore: size === null ? undefined : { size: Number(size), used, available: Math.max(0, Number(size) - used) },
    remainingLeaseMs: longestLease(permitHolders),
    waiting: queued(line, instances, wants),
    ...base,
  };
}

/**
 * The inspections of every kind kept under one name (plain, fair, read-write, semaphore), from the
 * script's reply and the labels of the clients it mentions.
 */
export function inspectionsOf(
  { name, reply }: InspectedName,
  instances: Map<string, LockInstanceInfo>,
  waitingHere: WaitingHere,
): Record<InspectedLockKind, LockInspection> {
  const [now, fence, plain, fair, queue, readWrite, semaphore] = reply;
  const lastToken = fence === null ? undefined : Number(fence);
  const base = (kind: InspectedLockKind) => {
    const waitingHereForMs = waitingHere(kind);
    return { waitingHere: waitingHereForMs.length, waitingHereForMs, lastToken };
  };
  let writer: LockHolderInfo | undefined;
  let readers: LockHolderInfo[] = [];
  if (readWrite.length === 2) {
    const [writerState, readerStates] = readWrite;
    const toHolder = (state: ReadWriteHolderState): LockHolderInfo => holder(state[0], state[1], state[2], state[3], state[4], now, instances);
    writer = writerState.length === 5 ? toHolder(writerState) : undefined;
    readers = readerStates.map(toHolder);
  }
  const holders = [...(writer ? [writer] : []), ...readers];
  return {
    reentrant: exclusive(name, 'reentrant', plain, marks(plain, instances), base('reentrant'), now, instances),
    fair: exclusive(name, 'fair', fair, queued(queue, instances), base('fair'), now, instances),
    'read-write': {
      name,
      kind: 'read-write',
      locked: holders.length > 0,
      holder: writer,
      readers,
      permitHolders: [],
      semaphore: undefined,
      remainingLeaseMs: longestLease(holders),
      waiting: [],
      ...base('read-write'),
    },
    semaphore: semaphoreInspection(name, semaphore, base('semaphore'), now, instances),
  };
}

/** Whether an inspection shows anything: a holder, readers or waiters. */
export function inUse(inspection: LockInspection): boolean {
  return inspection.locked || inspection.waiting.length > 0 || inspection.waitingHere > 0;
}
