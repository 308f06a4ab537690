import type { InspectionContext } from '../../inspection/kind-inspection.js';
import { HASH_TABLE_LUA } from '../../inspection/inspect-lua.js';
import { clientOf, holder } from '../../inspection/inspection-reply.js';
import type { LockInspection, LockInstanceInfo, LockWaiterInfo } from '../../inspection/lock-inspection.js';
import { luaHelper } from '../../scripts/lua-helper.js';

/** An exclusive lock hash: {owner, holds, token, renew, pttl, [client, mark, ...], granted}, or {} when there is none. */
export type ExclusiveState = [] | [string | null, string | null, string | null, string | null, number, string[], string | null];

/**
 * Inspection Lua of the exclusive kinds' hash (plain and fair lock): `exclusive(lock_key)` reads the
 * holder (owner, holds, token, renew), the lease left, the waiting marks (`w:<client>` = arrival
 * number and first waiting caller, the plain lock's: see waiting-marks.lua.ts) and whether the holder
 * was granted the lock and has not claimed it yet, or {} when there is no lock.
 */
export const EXCLUSIVE_STATE_LUA = luaHelper(
  'exclusive',
  `
local function exclusive(lock_key)
  local state = hash_table(lock_key)
  if not state then return {} end
  local marks = {}
  for field, value in pairs(state) do
    if string.sub(field, 1, 2) == 'w:' then
      marks[#marks + 1] = string.sub(field, 3)
      marks[#marks + 1] = value
    end
  end
  return {state['owner'] or false, state['holds'] or false, state['token'] or false, state['renew'] or false, redis.call('pttl', lock_key), marks, state['granted'] or false}
end
`,
  [HASH_TABLE_LUA],
);

/** The holder's client and the marked clients. */
export function exclusiveClients(state: ExclusiveState): string[] {
  if (state.length !== 7) return [];
  const clients = state[0] ? [clientOf(state[0])] : [];
  for (let i = 0; i < state[5].length; i += 2) clients.push(state[5][i]!);
  return clients;
}

/** The plain lock's waiting processes, in arrival order (their marks' numbers), each with its first waiting caller. */
export function waitingMarks(state: ExclusiveState, instances: ReadonlyMap<string, LockInstanceInfo>): LockWaiterInfo[] {
  if (state.length !== 7) return [];
  const marks: { client: string; arrival: number; first: string | undefined }[] = [];
  for (let i = 0; i < state[5].length; i += 2) {
    const mark = state[5][i + 1]!;
    const colon = mark.indexOf(':');
    marks.push({ client: state[5][i]!, arrival: Number(colon < 0 ? mark : mark.slice(0, colon)), first: colon < 0 ? undefined : mark.slice(colon + 1) });
  }
  return marks
    .sort((a, b) => a.arrival - b.arrival)
    .map(({ client, first }, i) => ({ position: i + 1, instance: instances.get(client)!, owner: first, expiresInMs: undefined, permits: undefined }));
}

/** An exclusive kind's inspection: its holder, if any, and `waiting`. */
export function exclusiveInspection(
  kind: 'reentrant' | 'fair',
  state: ExclusiveState,
  waiting: LockWaiterInfo[],
  { name, now, instances, base }: InspectionContext,
): LockInspection {
  const lock =
    state.length === 7 && state[0] ? holder(state[0], state[1], state[2], state[3], state[4], now, instances, undefined, state[6] === '1') : undefined;
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
