import type { Logger } from '@nestjs/common';
import { LockLostError, type LockHandle } from '../core/index.js';
import type { DistributedLockMetadata, OnLost } from './distributed-lock.options.js';
import { isAnswered, LockedCallFailure } from './lock-failure.answers.js';
import type { RequestCall } from './request-call.js';

/** What a locked call learns from watching its lock (see watchLoss). */
export interface LossWatch {
  /** `onLost: 'abort-request'`: rejects (a LockedCallFailure) when the lock is lost before the request was answered. */
  readonly lost: Promise<never> | undefined;
  /** The request was answered with the lost lock: what the method gives later is dropped. */
  readonly abandoned: boolean;
  /** Stops watching (the call released its lock). */
  stop(): void;
}

/**
 * Applies a decorated call's `onLost`, when it is not the default, while its method runs (the default
 * 'abort' is the handle's signal alone, which aborts anyway: the call adds no listener for it, nor
 * creates the signal). 'abort-request' on a request that has not been answered yet rejects `lost`
 * (on a call made by code it is the default: undefined is returned); a function is called once (its
 * failures are logged, never thrown: this runs from a timer or a renewal's reply).
 */
export function watchLoss(
  onLost: Exclude<OnLost, 'abort'>,
  handle: LockHandle,
  name: string,
  call: { readonly metadata: DistributedLockMetadata; readonly args: unknown[]; readonly request: RequestCall | undefined; readonly logger: Logger },
): LossWatch | undefined {
  const { request } = call;
  if (onLost === 'abort-request' && !request) return undefined;
  let abandon: ((failure: LockedCallFailure) => void) | undefined;
  let lost: Promise<never> | undefined;
  if (onLost === 'abort-request') {
    lost = new Promise<never>((_, reject) => (abandon = reject));
    lost.catch(() => undefined); // raced, or not: never an unhandled rejection
  }
  const watch = { lost, abandoned: false, stop: () => undefined as void };
  const { signal } = handle;
  const onAbort = (): void => {
    const error = signal.reason instanceof LockLostError ? signal.reason : new LockLostError(name, 'lease-expired');
    if (onLost === 'abort-request') {
      if (isAnswered(request!.context)) return;
      watch.abandoned = true;
      abandon!(new LockedCallFailure({ kind: 'lost', error }, name, request!));
    } else if (typeof onLost === 'function') {
      void (async () => onLost({ name, error, lock: handle, args: call.args, context: request?.context }))().catch((failure: unknown) =>
        call.logger.error(`onLost of ${call.metadata.where} failed for lock "${name}": ${(failure as Error)?.message ?? String(failure)}`),
      );
    }
  };
  if (signal.aborted) {
    onAbort();
    return watch;
  }
  signal.addEventListener('abort', onAbort, { once: true });
  watch.stop = () => signal.removeEventListener('abort', onAbort);
  return watch;
}
