import { HASH_TABLE_LUA, LIVE_QUEUE_LUA, LIVE_UNTIL_LUA } from '../../inspection/inspect-lua.js';
import { clientOf, holder, longestLease, queueClients, queued, type QueueState } from '../../inspection/inspection-reply.js';
import type { KindInspection } from '../../inspection/kind-inspection.js';
import { luaHelper } from '../../scripts/lua-helper.js';
import { processChannel, SEMAPHORE_VARIANT, semaphoreKeys } from './semaphore-keys.js';

/** A semaphore acquisition: {owner, permits, token, renew, ms left}. */
type SemaphoreHolderState = [string, string, string, string | null, number];
/** {size, live holders, live queue, permits each queued waiter asks for (in queue order)}, or {} when it was never used. */
type SemaphoreState = [] | [string | null, SemaphoreHolderState[], QueueState, string[]];

/** `semaphore(semaphore_key, holders_key, queue_key, deadlines_key, now)`: its size, live holders and live line (see semaphore-keys.ts for the layout). */
const SEMAPHORE_STATE_LUA = luaHelper(
  'semaphore_state',
  `
local function semaphore(semaphore_key, semaphore_holders_key, semaphore_queue_key, semaphore_deadlines_key, now)
  local state = hash_table(semaphore_key)
  if not state then return {} end
  local holders = {}
  for _, live in ipairs(live_until(semaphore_holders_key, now)) do
    local held = state['h:' .. live[1]]
    if held then
      local permits, token = string.match(held, '^(%d+):(%d+)$')
      holders[#holders + 1] = {live[1], permits, token, state['d:' .. live[1]] or false, live[2]}
    end
  end
  local line = live_queue(semaphore_queue_key, semaphore_deadlines_key, now)
  local wants = {}
  for i = 1, #line, 2 do
    wants[#wants + 1] = state['w:' .. line[i]] or '1'
  end
  return {state['permits'] or false, holders, line, wants}
end
`,
  [HASH_TABLE_LUA, LIVE_UNTIL_LUA, LIVE_QUEUE_LUA],
);

/** The semaphore's part of inspection: its size, the acquisitions holding permits, and its line. */
export const SEMAPHORE_INSPECTION: KindInspection<SemaphoreState> = {
  kind: 'semaphore',
  variant: SEMAPHORE_VARIANT,
  keys: (keys, name) => {
    const k = semaphoreKeys(keys, name);
    return [k.state, k.holders, k.queue, k.queueDeadlines];
  },
  helpers: [SEMAPHORE_STATE_LUA],
  state: ([state, holders, queue, deadlines]) => `semaphore(${state}, ${holders}, ${queue}, ${deadlines}, now)`,
  // This process's waiters wait on its own channel of the semaphore (as Semaphore derives it).
  waitingChannel: (keys, name, clientId) => processChannel(semaphoreKeys(keys, name).channel, clientId),
  clients: (state) => (state.length === 4 ? [...state[1].map((acquisition) => clientOf(acquisition[0])), ...queueClients(state[2])] : []),
  read: (state, { name, now, instances, base }) => {
    const [size, acquisitions, line, wants] = state.length === 4 ? state : [null, [], [], []];
    const permitHolders = acquisitions.map(([owner, permits, token, renew, leftMs]) =>
      holder(owner, '1', token, renew, leftMs, now, instances, Number(permits)),
    );
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
  },
};
