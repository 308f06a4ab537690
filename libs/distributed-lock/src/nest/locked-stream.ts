import { Observable, type Subscription } from 'rxjs';

/**
 * A request handler's stream, run in the lock's context, with the lock released when it ends: after
 * the release on complete or error (so the answer goes out after it, as for a promise), when the
 * subscriber unsubscribes, or when `lost` rejects ('abort-request': the stream fails with it).
 */
export function holdUntilEnd(
  source: Observable<unknown>,
  inLock: (subscribe: () => Subscription) => Subscription,
  release: () => Promise<void>,
  lost: Promise<never> | undefined,
): Observable<unknown> {
  return new Observable<unknown>((subscriber) => {
    let ended = false;
    const end = (notify: () => void): void => {
      if (ended) return;
      ended = true;
      void release().then(notify);
    };
    const inner = inLock(() =>
      source.subscribe({
        next: (value) => subscriber.next(value),
        error: (error: unknown) => end(() => subscriber.error(error)),
        complete: () => end(() => subscriber.complete()),
      }),
    );
    lost?.catch((failure: unknown) => {
      inner.unsubscribe();
      end(() => subscriber.error(failure));
    });
    return () => {
      inner.unsubscribe();
      end(() => undefined);
    };
  });
}
