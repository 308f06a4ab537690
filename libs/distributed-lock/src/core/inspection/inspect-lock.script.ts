import { LockKeys } from '../scripts/lock-keys.js';
import { defineLockScript, type LockScript } from '../scripts/lock-script.js';
import { SERVER_MS_LUA } from './inspect-lua.js';
import type { KindInspection } from './kind-inspection.js';

/** One lock name to inspect, under the client's key layout. */
export interface InspectLockArgs {
  readonly keys: LockKeys;
  readonly name: string;
}

/** {now (server ms), fence counter, then each kind's state, in the order of the kinds' parts}. */
export type InspectLockReply = [number, string | null, ...unknown[]];

/**
 * The inspection script, assembled from the kinds' parts (KindInspection, one per kind, each from its
 * folder): it reads everything Redis keeps about one lock name, without changing anything, in one step
 * (so the holder, the waiters and the readers are of one instant): the fencing counter, then each
 * kind's state (its part's Lua, on its keys). Tokens and holds come back as the strings Redis stores
 * (never through Lua numbers, which print 15 digits); times as integers. KEYS: the fence, then each
 * part's keys in turn.
 */
export class LockInspectionScript {
  readonly script: LockScript<InspectLockArgs, InspectLockReply>;

  constructor(readonly parts: readonly KindInspection[]) {
    // Each part takes a fixed number of keys: counted once on any name.
    const probe = new LockKeys('', false);
    let next = 2;
    const states = parts.map((part) => {
      const keys = part.keys(probe, 'x').map(() => `KEYS[${next++}]`);
      return `  ${part.state(keys)},\n`;
    });
    this.script = defineLockScript<InspectLockArgs, InspectLockReply>({
      name: 'dlockInspect',
      keys: ({ keys, name }) => [keys.fence(name), ...parts.flatMap((part) => part.keys(keys, name))],
      argv: () => [],
      helpers: [SERVER_MS_LUA, ...parts.flatMap((part) => part.helpers)],
      lua: `
local now = server_ms()
return {
  now,
  redis.call('get', KEYS[1]),
${states.join('')}}
`,
    });
  }
}
