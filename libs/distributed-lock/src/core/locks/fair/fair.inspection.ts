import { LIVE_QUEUE_LUA } from '../../inspection/inspect-lua.js';
import { queueClients, queued, type QueueState } from '../../inspection/inspection-reply.js';
import type { KindInspection } from '../../inspection/kind-inspection.js';
import { EXCLUSIVE_STATE_LUA, exclusiveClients, exclusiveInspection, type ExclusiveState } from '../exclusive/exclusive.inspection.js';
import { FAIR_VARIANT, fairQueueKeys } from './fair-keys.js';

/** The fair lock's part of inspection: its hash (holder) and its live queue, first to be served first. */
export const FAIR_INSPECTION: KindInspection<[ExclusiveState, QueueState]> = {
  kind: 'fair',
  variant: FAIR_VARIANT,
  keys: (keys, name) => {
    const line = fairQueueKeys(keys, name);
    return [keys.lock(name, FAIR_VARIANT), line.queue, line.deadlines];
  },
  helpers: [EXCLUSIVE_STATE_LUA, LIVE_QUEUE_LUA],
  state: ([lock, queue, deadlines]) => `{exclusive(${lock}), live_queue(${queue}, ${deadlines}, now)}`,
  waitingChannel: (keys, name) => keys.channel(name, FAIR_VARIANT),
  clients: ([lock, queue]) => [...exclusiveClients(lock), ...queueClients(queue)],
  read: ([lock, queue], context) => exclusiveInspection('fair', lock, queued(queue, context.instances), context),
};
