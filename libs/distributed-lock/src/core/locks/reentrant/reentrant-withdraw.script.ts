import type { ExclusiveKeys } from '../exclusive/exclusive-keys.js';
import { defineLockScript } from '../../scripts/lock-script.js';
import { WAITING_MARKS_LUA } from '../exclusive/waiting-marks.lua.js';

export interface ReentrantWithdrawArgs extends Pick<ExclusiveKeys, 'lock'> {
  readonly client: string;
}

/**
 * A process withdraws from the processes waiting for a lock: its last caller stopped waiting without
 * the lock (timeout, abort). Its waiting mark goes. (A grant to one of its callers that left is given
 * back by its token, see LockLine: it is that caller's, not the process's.)
 */
export const reentrantWithdraw = defineLockScript<ReentrantWithdrawArgs, number>({
  name: 'dlockReentrantWithdraw',
  guarded: true,
  keys: (a) => [a.lock],
  argv: (a) => [a.client],
  helpers: [WAITING_MARKS_LUA],
  lua: `
unmark_waiting(KEYS[1], ARGV[1])
return 0
`,
});
