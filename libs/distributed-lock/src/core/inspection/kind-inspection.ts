import type { LockKeys } from '../scripts/lock-keys.js';
import type { LuaHelper } from '../scripts/lua-helper.js';
import type { InspectedLockKind, LockInspection, LockInstanceInfo } from './lock-inspection.js';

/** What a kind's reading of its state is given besides the state (see KindInspection.read). */
export interface InspectionContext {
  readonly name: string;
  /** The server's time of the snapshot (ms since the epoch). */
  readonly now: number;
  /** The labels of the processes the snapshot mentions, by client id. */
  readonly instances: ReadonlyMap<string, LockInstanceInfo>;
  /** What does not depend on the kind: this process's waiting callers and the last fencing token. */
  readonly base: Pick<LockInspection, 'waitingHere' | 'waitingHereForMs' | 'lastToken'>;
}

/**
 * One lock kind's part of inspection (each kind's lives in its folder, `core/locks/<kind>/`): the keys
 * it keeps under a name, the Lua that reads them, and how its part of the reply becomes a
 * LockInspection. The inspection script is assembled from every kind's part (see LockInspectionScript),
 * so that one script reads every kind under a name at one instant, and a kind's layout is written in
 * its own folder only. `S`: its part of the script's reply.
 */
export interface KindInspection<S = unknown> {
  readonly kind: InspectedLockKind;
  /** The suffix of its main key after `<prefix>{name}` (how SCAN tells the kinds under a name apart). */
  readonly variant: string;
  /** The keys it reads for the name `name`, in the order `state` takes them. */
  keys(keys: LockKeys, name: string): string[];
  /** The Lua helpers `state` calls. */
  readonly helpers: readonly LuaHelper[];
  /** A Lua expression of its state, from its keys (Lua expressions, in the order of `keys`) and the local `now` (server ms). */
  state(keys: readonly string[]): string;
  /** The channel its callers in the process `clientId` wait on (to time them, see LockInspection.waitingHereForMs). */
  waitingChannel(keys: LockKeys, name: string, clientId: string): string;
  /** Every client id its state mentions (holders, waiters), for their labels. */
  clients(state: S): string[];
  read(state: S, context: InspectionContext): LockInspection;
}
