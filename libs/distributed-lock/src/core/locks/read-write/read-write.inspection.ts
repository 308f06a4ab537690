import { HASH_TABLE_LUA, LIVE_UNTIL_LUA } from '../../inspection/inspect-lua.js';
import { clientOf, holder, longestLease } from '../../inspection/inspection-reply.js';
import type { KindInspection } from '../../inspection/kind-inspection.js';
import type { LockHolderInfo } from '../../inspection/lock-inspection.js';
import { luaHelper } from '../../scripts/lua-helper.js';
import { READ_WRITE_VARIANT, readersKey } from './read-write-keys.js';

/** A holder of a read-write lock: {owner, holds, token, renew, ms left}. */
type ReadWriteHolderState = [string, string | null, string | null, string | null, number];
/** {writer (or {}), live readers}, or {} when there is no lock. */
type ReadWriteState = [] | [[] | ReadWriteHolderState, ReadWriteHolderState[]];

/** `read_write(rw_key, readers_key, now)`: the live writer and the live readers (see read-write.lua.ts for the layout). */
const READ_WRITE_STATE_LUA = luaHelper(
  'read_write_state',
  `
local function read_write(rw_key, readers_key, now)
  local state = hash_table(rw_key)
  if not state then return {} end
  local writer = {}
  if state['writer'] and tonumber(state['wexp']) > now then
    writer = {state['writer'], state['wholds'] or false, state['wtoken'] or false, state['wrenew'] or false, tonumber(state['wexp']) - now}
  end
  local readers = {}
  for _, live in ipairs(live_until(readers_key, now)) do
    local owner = live[1]
    local holds, token, renew = state['r:' .. owner] or false, state['t:' .. owner] or false, state['d:' .. owner] or false
    readers[#readers + 1] = {owner, holds, token, renew, live[2]}
  end
  return {writer, readers}
end
`,
  [HASH_TABLE_LUA, LIVE_UNTIL_LUA],
);

/** The read-write lock's part of inspection: its writer (the holder) and its readers; nobody is queued in Redis. */
export const READ_WRITE_INSPECTION: KindInspection<ReadWriteState> = {
  kind: 'read-write',
  variant: READ_WRITE_VARIANT,
  keys: (keys, name) => [keys.lock(name, READ_WRITE_VARIANT), readersKey(keys, name)],
  helpers: [READ_WRITE_STATE_LUA],
  state: ([hash, readers]) => `read_write(${hash}, ${readers}, now)`,
  waitingChannel: (keys, name) => keys.channel(name, READ_WRITE_VARIANT),
  clients: (state) => {
    if (state.length !== 2) return [];
    const [writer, readers] = state;
    return [...(writer.length === 5 ? [clientOf(writer[0])] : []), ...readers.map((reader) => clientOf(reader[0]))];
  },
  read: (state, { name, now, instances, base }) => {
    const toHolder = (each: ReadWriteHolderState): LockHolderInfo => holder(each[0], each[1], each[2], each[3], each[4], now, instances);
    const writer = state.length === 2 && state[0].length === 5 ? toHolder(state[0]) : undefined;
    const readers = state.length === 2 ? state[1].map(toHolder) : [];
    const holders = [...(writer ? [writer] : []), ...readers];
    return {
      name,
      kind: 'read-write',
      locked: holders.length > 0,
      holder: writer,
      readers,
      permitHolders: [],
      semaphore: undefined,
      remainingLeaseMs: longestLease(holders),
      waiting: [],
      ...base,
    };
  },
};
