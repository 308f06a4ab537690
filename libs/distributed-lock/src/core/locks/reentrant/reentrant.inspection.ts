import type { KindInspection } from '../../inspection/kind-inspection.js';
import { EXCLUSIVE_STATE_LUA, exclusiveClients, exclusiveInspection, waitingMarks, type ExclusiveState } from '../exclusive/exclusive.inspection.js';

/** The plain lock's part of inspection: its hash `<prefix>{name}`, its holder and the processes marked as waiting. */
export const REENTRANT_INSPECTION: KindInspection<ExclusiveState> = {
  kind: 'reentrant',
  variant: '',
  keys: (keys, name) => [keys.lock(name)],
  helpers: [EXCLUSIVE_STATE_LUA],
  state: ([lock]) => `exclusive(${lock})`,
  waitingChannel: (keys, name) => keys.channel(name),
  clients: exclusiveClients,
  read: (state, context) => exclusiveInspection('reentrant', state, waitingMarks(state, context.instances), context),
};
