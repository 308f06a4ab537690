import { getLockContext, runInLockContext, runWithCurrentLock } from '../context/lock-context.js';
import type { LockRuntime } from '../engine/lock-runtime.js';
import type { LockHandle } from '../context/lock-handle.js';

/**
 * Runs `fn` under a lock taken by `acquire` and always releases it. Runs in the caller's lock context
 * (or a new one), so code `fn` calls is the same owner and may re-enter; `fn` gets the handle. A
 * failure to release after `fn` is reported as a background error, not thrown: the work is done, and
 * the fencing token is what protects the resource from a stale holder.
 */
export function withLockOn<H extends LockHandle, T>(
  runtime: LockRuntime,
  name: string,
  acquire: () => Promise<H>,
  fn: (lock: H) => T | Promise<T>,
): Promise<T> {
  return runInLockContext(async () => {
    const context = getLockContext()!;
    const handle = await acquire();
    try {
      return await runWithCurrentLock(context, handle, () => fn(handle));
    } finally {
      await handle.releaseUnlessOver().catch((error: unknown) => runtime.background.report('release', name, error));
    }
  });
}
