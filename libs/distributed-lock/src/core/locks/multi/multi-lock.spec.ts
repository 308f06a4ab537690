import { LockBackendError } from '../../errors/lock-backend.error.js';
import { systemClock } from '../../util/clock.js';
import type { BaseLock } from '../base-lock.js';
import type { LockRuntime } from '../../engine/lock-runtime.js';
import { MultiLock, MultiLockHandle } from './multi-lock.js';

/**
 * The multi-lock's own rules, on scripted locks (each lock's acquisition is tested on Redis): here,
 * what a failure on the fast path (one attempt on every lock at once) does to a caller willing to wait.
 */
function scriptedLock(name: string, answers: (() => Promise<unknown>)[]): BaseLock {
  const handle = { name, token: 1, isHeld: true, signal: new AbortController().signal, unlock: async () => undefined, throwIfLost: () => undefined };
  return {
    name,
    kind: 'reentrant',
    id: `lock:{${name}}`,
    acquire: () => (answers.shift() ?? (async () => handle))(),
  } as unknown as BaseLock;
}

const runtime = {
  operationTimeoutMs: 100,
  clock: systemClock,
  assertOpen: () => undefined,
  background: { run: () => Promise.resolve(), report: () => undefined, acquisitionStarted: () => undefined, acquisitionEnded: () => undefined },
} satisfies Partial<LockRuntime> as unknown as LockRuntime;
const owner = { id: 'me:1', outsideContext: false };
const refused = (): Promise<unknown> => Promise.reject(new LockBackendError('lock', 'a', new Error('refused: run past its deadline')));

describe('MultiLock', () => {
  it('a Redis hiccup on the fast path does not end a wait: the locks are then taken one by one', async () => {
    // It failed a 30 s wait at once (found by the simulator).
    const multi = new MultiLock(runtime, [scriptedLock('a', [refused]), scriptedLock('b', [])]);
    const outcome = await multi.acquire(owner, { leaseMs: 1000, waitMs: 30_000, signal: undefined });
    expect(outcome).toBeInstanceOf(MultiLockHandle);
  });

  it('control: without a wait, the hiccup is the answer', async () => {
    const multi = new MultiLock(runtime, [scriptedLock('a', [refused]), scriptedLock('b', [])]);
    await expect(multi.acquire(owner, { leaseMs: 1000, waitMs: 0, signal: undefined })).rejects.toBeInstanceOf(LockBackendError);
  });
});
